// NVRTC: CUDA source to machine code for one architecture at run time, with the compiler's log in the
// error when it fails. Needs no GPU, so code generation is tested on any machine with the toolkit.
#pragma once

#include <string>

#include "formats/status.h"

namespace gpuscope::runtime {

enum class CodeKind { kCubin, kPtx };

// arch: the compute capability as 90 for sm_90. Returns the CUBIN (kCubin) or the PTX text (kPtx).
Result<std::string> compileCuda(const std::string& source, const std::string& name, int arch, CodeKind kind);

}  // namespace gpuscope::runtime
