// Compiles the test binaries' precompiled headers (cmake/nf_pch.cmake); it has no code.
