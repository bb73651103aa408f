// The translation unit that builds the test binaries' shared precompiled header
// (tests/CMakeLists.txt, warden_test_pch). It defines nothing.
