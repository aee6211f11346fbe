# gpuscope's SQLite: the target gpuscope::sqlite.
#
# When scripts/fetch-sqlite has put Debian's SQLite amalgamation in .deps/sqlite/, it is compiled here into a
# private, position-independent static library: the injected collector then carries its own copy (hidden by
# --exclude-libs) instead of binding to whichever libsqlite3 the profiled program loaded, and the build leaves
# out what gpuscope never uses. Otherwise the system's libsqlite3 is used, with a warning.
set(GPUSCOPE_SQLITE_SOURCE_DIR "${PROJECT_SOURCE_DIR}/.deps/sqlite" CACHE PATH "SQLite amalgamation (scripts/fetch-sqlite)")

if(EXISTS "${GPUSCOPE_SQLITE_SOURCE_DIR}/sqlite3.c" AND EXISTS "${GPUSCOPE_SQLITE_SOURCE_DIR}/sqlite3.h")
  enable_language(C)
  add_library(gpuscope_sqlite STATIC "${GPUSCOPE_SQLITE_SOURCE_DIR}/sqlite3.c")
  target_include_directories(gpuscope_sqlite SYSTEM PUBLIC "${GPUSCOPE_SQLITE_SOURCE_DIR}")
  # THREADSAFE=2: connections are never shared between threads, so SQLite's per-connection mutexes are
  # left out (the trace writer spends its time in SQLite; this and no memory statistics are ~20 % of it).
  target_compile_definitions(gpuscope_sqlite PRIVATE
    SQLITE_THREADSAFE=2
    SQLITE_DEFAULT_MEMSTATUS=0
    SQLITE_DQS=0
    SQLITE_OMIT_DEPRECATED
    SQLITE_OMIT_LOAD_EXTENSION
    SQLITE_OMIT_SHARED_CACHE
    SQLITE_OMIT_PROGRESS_CALLBACK
    SQLITE_LIKE_DOESNT_MATCH_BLOBS
    SQLITE_USE_ALLOCA
    SQLITE_MAX_DEFAULT_PAGE_SIZE=32768)
  # Always optimised: a debug SQLite would make every test and the collector needlessly slow.
  target_compile_options(gpuscope_sqlite PRIVATE -O2 -w)
  set_target_properties(gpuscope_sqlite PROPERTIES POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
  target_link_libraries(gpuscope_sqlite PUBLIC Threads::Threads ${CMAKE_DL_LIBS} m)
  add_library(gpuscope::sqlite ALIAS gpuscope_sqlite)
  file(READ "${GPUSCOPE_SQLITE_SOURCE_DIR}/VERSION" _gpuscope_sqlite_version)
  string(STRIP "${_gpuscope_sqlite_version}" _gpuscope_sqlite_version)
  message(STATUS "SQLite: gpuscope's own build of ${_gpuscope_sqlite_version} from ${GPUSCOPE_SQLITE_SOURCE_DIR}")
else()
  find_package(SQLite3 REQUIRED)
  add_library(gpuscope::sqlite ALIAS SQLite::SQLite3)
  message(WARNING "SQLite: no amalgamation in ${GPUSCOPE_SQLITE_SOURCE_DIR} (run scripts/fetch-sqlite); using the "
                  "system libsqlite3, which the injected collector then shares with the profiled program")
endif()
