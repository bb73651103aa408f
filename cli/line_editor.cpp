#include "cli/line_editor.h"

#include <histedit.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace warden::cli {

namespace {

char* prompt_of(EditLine* el) {
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  return const_cast<char*>(static_cast<LineEditor*>(data)->prompt().c_str());
}

}  // namespace

LineEditor::LineEditor(const char* program, std::string prompt) : prompt_(std::move(prompt)) {
  if (!::isatty(STDIN_FILENO) || !::isatty(STDOUT_FILENO)) return;
  editor_ = el_init(program, stdin, stdout, stderr);
  if (!editor_) return;  // no terminal after all: plain lines
  history_ = history_init();
  HistEvent event;
  history(history_, &event, H_SETSIZE, 1000);
  history(history_, &event, H_SETUNIQUE, 1);
  el_set(editor_, EL_CLIENTDATA, this);
  el_set(editor_, EL_PROMPT, &prompt_of);
  el_set(editor_, EL_EDITOR, "emacs");
  el_set(editor_, EL_SIGNAL, 1);  // the terminal is restored on signals
  el_set(editor_, EL_HIST, history, history_);
  el_source(editor_, nullptr);  // ~/.editrc
}

LineEditor::~LineEditor() {
  if (editor_) el_end(editor_);
  if (history_) history_end(history_);
}

bool LineEditor::read(std::string* line) {
  if (!editor_) {
    if (!std::getline(std::cin, *line)) return false;
    if (!line->empty() && line->back() == '\r') line->pop_back();
    return true;
  }
  int count = 0;
  const char* text = el_gets(editor_, &count);
  if (!text || count <= 0) return false;
  line->assign(text, static_cast<std::size_t>(count));
  while (!line->empty() && (line->back() == '\n' || line->back() == '\r')) line->pop_back();
  if (!line->empty()) {
    HistEvent event;
    history(history_, &event, H_ENTER, line->c_str());
  }
  return true;
}

}  // namespace warden::cli
