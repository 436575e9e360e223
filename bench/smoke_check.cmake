# Runs `atraced_bench --smoke` and checks that it completes and prints a table row for every
# case. Timing values are deliberately not checked. Usage: cmake -DBENCH=<path> -P this file.
if(NOT BENCH)
  message(FATAL_ERROR "pass -DBENCH=<path to atraced_bench>")
endif()
execute_process(COMMAND ${BENCH} --smoke
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 280)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "atraced_bench --smoke failed (${rc})\n--- stdout\n${out}\n--- stderr\n${err}")
endif()

set(expected
  churn.rtt64
  churn.rn10.baseline churn.rn10.stream churn.rn10.fd churn.rn10.async
  churn.rn10.stream.vs_limit churn.rn10.fd.vs_limit churn.rn10.async.vs_baseline
  churn.rn1000.baseline churn.rn1000.stream churn.rn1000.fd churn.rn1000.async
  churn.rn1000.stream.vs_limit churn.rn1000.fd.vs_limit churn.rn1000.async.vs_baseline
  churn.aging.baseline churn.aging.stream churn.aging.fd churn.aging.async
  bulk.baseline bulk.stream bulk.fd bulk.stream.vs_baseline bulk.fd.vs_baseline
  conc.c1.throughput conc.c1.begin_p50 conc.c1.begin_p99 conc.c1.baseline_throughput conc.c1.vs_baseline
  conc.c8.throughput conc.c8.begin_p50 conc.c8.begin_p99 conc.c8.baseline_throughput conc.c8.vs_baseline
  conc.c64.throughput conc.c64.begin_p50 conc.c64.begin_p99 conc.c64.baseline_throughput conc.c64.vs_baseline
  conc.c64.p99_vs_c1_p50
  recovery.walk recovery.daemon recovery.daemon.vs_walk
  memory.idle memory.clients memory.per_client
  submit.cann_api)

string(FIND "${out}" "\ncase " header)
if(header EQUAL -1)
  message(FATAL_ERROR "no table header in the output:\n${out}")
endif()
set(missing "")
foreach(id IN LISTS expected)
  # A row starts at a line start with the id, then spaces, then a value (or "-" for n/a).
  string(REPLACE "." "[.]" pattern "${id}")
  if(NOT out MATCHES "\n${pattern} +[-0-9]")
    list(APPEND missing ${id})
  endif()
endforeach()
if(NOT out MATCHES "submit[.]cann_api[^\n]*n/a \\(waits for the CANN API\\)")
  list(APPEND missing "submit.cann_api placeholder text")
endif()
if(NOT out MATCHES "\n# end of table")
  list(APPEND missing "end of table")
endif()
if(missing)
  message(FATAL_ERROR "table rows missing: ${missing}\n--- stdout\n${out}")
endif()
list(LENGTH expected n)
message(STATUS "bench smoke: all ${n} rows present")
