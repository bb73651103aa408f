// Effects of the program text awk and sed are given on their command line: the files it
// reads (`getline < F`, sed `r F` / `R F`), writes (`print > F`, sed `w F`, `s///w F`) and
// the commands it runs (`system(…)`, `… | getline`, `print | …`, sed `e`, `s///e`). Text
// that cannot be read through (a program file, an expansion in the program, text this
// reader does not understand) is an exec of code whose value is known only at run time:
// never harmless. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "bindings/shell_parser.h"
#include "engine/effects.h"

namespace warden {

// Appends the effects of the program text of `cmd` when its program is awk (awk, gawk,
// mawk, nawk, original-awk, busybox-awk) or sed (sed, gsed); nothing for other programs.
// Paths are normalized against `cwd` and `home`; `program` is the command's program.
void script_effects(const shell::SimpleCommand& cmd, const std::string& cwd,
                    const std::string& home, std::vector<Effect>* out);

// The same for one program text (exposed for tests): awk or sed syntax.
void awk_program_effects(std::string_view text, const std::string& cwd, const std::string& home,
                         std::vector<Effect>* out);
void sed_program_effects(std::string_view text, const std::string& cwd, const std::string& home,
                         std::vector<Effect>* out);

}  // namespace warden
