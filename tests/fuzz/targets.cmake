# The libFuzzer targets, one per parser: read by this folder's CMakeLists.txt
# (the fuzz build) and by tests/CMakeLists.txt, whose plain build compiles
# their sources as objects so that scripts/check-unused counts what they use.
set(MUSTER_FUZZ_TARGETS
  fuzz_addon
  fuzz_agentconf
  fuzz_bootcfg
  fuzz_catalog
  fuzz_config
  fuzz_customcols
  fuzz_dates
  fuzz_grubenv
  fuzz_hostnames
  fuzz_http_body
  fuzz_http_headers
  fuzz_icmp_echo
  fuzz_instructions
  fuzz_iso_headers
  fuzz_jsonpath
  fuzz_jsonwalk
  fuzz_jwt
  fuzz_labelsel
  fuzz_labelsel_text
  fuzz_manifest
  fuzz_model
  fuzz_mustache
  fuzz_names
  fuzz_netparse
  fuzz_payload
  fuzz_pgtext
  fuzz_proc
  fuzz_release
  fuzz_resolve
  fuzz_semver
  fuzz_smbios
  fuzz_sntp
  fuzz_staticnet
  fuzz_stepfacts
  fuzz_unowned
  fuzz_waitfor
)
# fuzz_pgtext: the PostgreSQL driver's rewrites, in builds that have it.
if(NOT MUSTER_WITH_POSTGRES)
  list(REMOVE_ITEM MUSTER_FUZZ_TARGETS fuzz_pgtext)
endif()
