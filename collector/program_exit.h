// How the recorded program ended, written into its trace: a run that failed is never analysed as if it were fine.
#pragma once

#include <string>

#include "formats/trace_schema.h"

namespace gpuscope::collector {

// The trace-wide data-quality row for a program's wait status:
//  - "program_exit" (info, count 0) when it exited with code 0;
//  - "program_stopped" (warning, count 128 + the signal) when SIGINT, SIGTERM or SIGHUP ended it: a user's Ctrl-C
//    or a job's time limit, after steps that ran as they do;
//  - "program_failed" (error, count the exit code, or 128 + the signal) for any other code or signal.
// parts_dir: where the bridges' sitecustomize writes exception-<pid>.txt, the uncaught Python exception's last line;
// the first such file's text is added to a failure's message.
schema::DataQualityRow programExitNote(int wait_status, const std::string& parts_dir);

}  // namespace gpuscope::collector
