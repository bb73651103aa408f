;; Package installs only from the team's list (packages.data.toml): `npm install A B` and
;; `pip install A B` are approved when the line is that one command, with no option, and every
;; package it names is on the team's list for that package manager. Any npm or pip install
;; naming a package that is not on the list asks a human, and so does any other install (an
;; option, a wrapper, a second command: no rule approves it, so the default outcome applies).
;; The list is data: the team edits packages.data.toml, and `warden check` / a reload picks it up.

;; npm install|i|add, pip|pip3 install.
(deffunction team-install-p (?program ?subcommand)
  (or (and (eq ?program "npm") (member$ ?subcommand (create$ "install" "i" "add")))
      (and (member$ ?program (create$ "pip" "pip3")) (eq ?subcommand "install"))))

;; The word is on the list of its package manager (pip names in lower case).
(deffunction team-listed-p (?program ?word)
  (if (eq ?program "npm")
      then (data-member "npm-packages" ?word)
      else (data-member "pip-packages" (str-lower ?word))))

;; At least one package, and every one on the list.
(deffunction team-all-listed-p (?program ?words)
  (if (= (length$ ?words) 0) then (return FALSE))
  (foreach ?w ?words
    (if (not (team-listed-p ?program ?w)) then (return FALSE)))
  TRUE)

(defrule team-install-listed
  ;; Only a line that is this one command with no option: no wrapper, no redirection, nothing
  ;; known only at run time, no second command. An option could name another registry or
  ;; index, a requirements file or a directory, or take the next word as its value.
  (shell-command (proposal ?id) (index 0) (depth 0) (dynamic FALSE) (program ?p) (args ?sub $?packages)
                 (flags) (wrappers) (assignments))
  (not (shell-command (proposal ?id) (index ~0)))
  (not (shell-redirect (proposal ?id)))
  (test (team-install-p ?p ?sub))
  (test (team-all-listed-p ?p ?packages))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule team-install-listed)
                    (reason (str-cat ?p " " ?sub ": every package is on the team's list")))))

(defrule team-install-unlisted
  (shell-command (proposal ?id) (program ?p) (args ?sub $? ?package $?))
  (test (team-install-p ?p ?sub))
  (test (not (team-listed-p ?p ?package)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule team-install-unlisted)
                    (reason (str-cat ?p " " ?sub " " ?package ": not on the team's list")))))
