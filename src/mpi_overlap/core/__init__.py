"""The bottom layer: what every other part stands on, importing nothing of the package
above it. Errors (`errors`), numbers as text (`formatting`, `values`, `sizes`), the one
atomic writer (`file_output`), the one reader and the schemas (`json_input`, `schema`),
the state directory and its locks (`paths`, `locks`), process sessions and the machine's
load (`procs`, `machine_load`), signals (`interrupts`), terminal output (`termsafe`, `ui`,
`verbosity`, `bound_setting`), link rates, the cited sources and the version."""
