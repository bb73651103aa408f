;;; files.clp — where the agent may read, write and delete files, through the file actuator
;;; and through any command (its `effect` facts: operands, options such as `sort -o` or
;;; `pytest --basetemp`, redirects, `cmake -E rm`, `uniq IN OUT` …).
;;;
;;; The workspace is the agent's: reads, writes and deletes inside it are everyday work
;;; (other rules, e.g. credentials or persistence, still reject or escalate and win). Outside
;;; it, writes and deletes are rejected; reads of system files are fine, reads elsewhere in
;;; the home directory need a human.
;;;
;;; A path is in the workspace only if it is there both as written (normalized) and after
;;; symlinks (resolved): `ws/etc_link/passwd` with `etc_link -> /etc` is outside.
;;;
;;; The file verb is the proposal's `action` (`{"target":"file","action":"write",…}`); a
;;; `payload.action` given alone becomes the `action`.

;; TRUE for a path outside the workspace that a read may touch without a human: not the home
;; directory, nothing in it, none of its ancestors, and no other user's home (/home/…,
;; /Users/…, /root).
(deffunction files-outside-read-ok (?t)
  (and (not (path-within ?t (home-dir))) (not (path-within (home-dir) ?t))
       (not (str-prefix "/home/" ?t)) (not (str-prefix "/Users/" ?t)) (not (path-within ?t "/root"))))

;; TRUE for a system path a read may touch without a human: not a device (`/dev/sda`,
;; `/dev/mem`; the harmless ones are not in the system class) and not root's home.
(deffunction files-system-read-ok (?t)
  (and (not (str-prefix "/dev/" ?t)) (not (path-within ?t "/root"))))

;; TRUE for a deleted path that is, or as a glob may be, a repository's .git (`rm -rf .git`,
;; `rm -rf .[!.]*`, `rm -rf .g*`, `rm -rf vendor/x/.git`): the shell expands a dot glob to
;; every hidden name it matches, .git among them, whatever class the glob was given.
(deffunction files-git-dir-target-p (?t)
  (if (str-suffix "/.git" ?t) then (return TRUE))
  (bind ?name ?t)
  (while (str-index "/" ?name)
    (bind ?name (sub-string (+ (str-index "/" ?name) 1) (str-length ?name) ?name)))
  ;; A brace expansion (`{.,}*`, `.{g,}*`) or a POSIX class (`.[[:alpha:]]*`) the glob
  ;; matcher does not read may name .git: taken to.
  (if (or (and (str-prefix "." ?name) (or (str-index "{" ?name) (str-index "[[:" ?name)))
          (regex-match "^\\{(?:[^},]*,)*\\.|^\\{[^}]*\\}\\." ?name))
   then (return TRUE))
  (and (str-prefix "." ?name) (or (str-index "*" ?name) (str-index "?" ?name) (str-index "[" ?name))
       (glob-match ?name ".git")))

;; TRUE for a find test that selects only some files: a name, path or regex test that
;; matches neither .git nor what it holds (`-name '*'`, `-regex '.*'`, `-path '*'`, `-path
;; './.git/*'` select the repository too).
(deffunction files-find-filter-p (?test ?value)
  ;; The -i tests ignore case: `-iname '.GIT'` selects .git.
  (if (str-prefix "-i" ?test) then (bind ?value (lowcase ?value)))
  ;; A brace or a character class glob-match does not read (`.{g,}*`, `.[[:alpha:]]*`) may
  ;; select anything.
  (if (or (str-index "{" ?value) (str-index "[[:" ?value)) then (return FALSE))
  (if (or (eq ?test "-name") (eq ?test "-iname"))
   then (return (not (glob-match ?value ".git"))))
  (if (or (eq ?test "-regex") (eq ?test "-iregex"))
   then (bind ?re (str-cat "^(?:" ?value ")$"))
        (return (not (or (regex-match ?re "./.git") (regex-match ?re "./.git/HEAD")))))
  (not (or (glob-match ?value ".git") (glob-match ?value "./.git") (glob-match ?value "./.git/HEAD"))))

;; TRUE for a find command line with no name, path or regex test that selects only some
;; files (files-find-filter-p): every file under its start points, .git too, is selected.
(deffunction files-find-unfiltered-p (?v)
  (bind ?n (length$ ?v))
  (loop-for-count (?k 1 (- ?n 1))
    (bind ?w (nth$ ?k ?v))
    (if (and (not (neq ?w "-name" "-iname" "-path" "-ipath" "-regex" "-iregex" "-wholename"
                       "-iwholename" "-lname" "-ilname"))
             (files-find-filter-p ?w (nth$ (+ ?k 1) ?v)))
     then (return FALSE)))
  TRUE)

;; TRUE for a find command line that deletes without a name, path or regex test that
;; selects only some files (`find . -delete`, `find . -type f -delete`, `find . -name '*'
;; -delete`): everything under its start points goes.
(deffunction files-find-unfiltered-delete-p (?v)
  (and (member$ "-delete" ?v) (files-find-unfiltered-p ?v)))

;; Stops the file actuator (or a tool whose arguments the effects table names: an MCP
;; filesystem server's write_file, move_file …) writing, appending or deleting outside the
;; workspace (`/etc/hosts`, `~/.ssh/config`, `../../x`): the agent owns only the workspace.
(defrule files-write-outside-workspace
  (effect (proposal ?id) (index -1) (kind write|delete) (object path) (in-workspace FALSE) (target ?p))
  (proposal (id ?id) (target file|tool))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule files-write-outside-workspace)
                    (reason (str-cat "write outside the workspace: " ?p)))))

;; Asks a human before the file actuator reads a file outside the workspace in the home
;; directory (`~/notes.txt`, `~/.ssh/id_rsa.pub`) or a start-up file (`~/.bashrc`,
;; `/etc/passwd`): not destructive, but it widens what the agent sees. (System files such as
;; /usr/include/stdio.h are approved by files-read-system; credentials are rejected.)
;; Tools reading through their arguments (read_text_file, list_directory …) too.
(defrule files-read-outside-workspace
  (effect (proposal ?id) (index -1) (kind read) (object path) (in-workspace FALSE) (class ?c&none|persistence) (target ?p))
  (test (or (eq ?c persistence) (not (files-outside-read-ok ?p))))
  (proposal (id ?id) (target file|tool))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-read-outside-workspace)
                    (reason (str-cat "read outside the workspace: " ?p)))))

;; Approves reading a file inside the workspace (everyday work). Credentials and
;; persistence files are judged by credentials.clp and persistence rules, which win.
(defrule files-read-workspace
  (effect (proposal ?id) (index -1) (kind read) (in-workspace TRUE) (class ~persistence))
  (proposal (id ?id) (target file))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule files-read-workspace)
                    (reason "read inside the workspace"))))

;; Asks a human before the file actuator (or a tool) reads outside the workspace a file of
;; a class no other read rule judges (a build file or repository store of another project,
;; `/dev/tcp/…`): a search's file-name glob (`Glob` of `~/other/**/Makefile`) adds such a
;; read to a proposal whose own directory is approved.
(defrule files-read-outside-other-class
  (effect (proposal ?id) (index -1) (kind read) (object path) (in-workspace FALSE)
          (class ?c&~none&~persistence&~system&~credential&~secrets-config) (target ?p))
  (proposal (id ?id) (target file|tool))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-read-outside-other-class)
                    (reason (str-cat "read outside the workspace: " ?p)))))

;; Approves reading system files outside the workspace (`/usr/include/stdio.h`,
;; `/etc/os-release`), and other unclassified files outside the home directory.
(defrule files-read-system
  (effect (proposal ?id) (index -1) (kind read) (in-workspace FALSE) (class ?c&system|none) (target ?p))
  (test (or (eq ?c system) (files-outside-read-ok ?p)))
  (proposal (id ?id) (target file))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule files-read-system)
                    (reason (str-cat "read of a system file: " ?p)))))

;; Asks a human before the file actuator (or a tool) reads a persistence file in the
;; workspace (`.envrc`, `.git/config`): direnv files and git config often carry tokens.
(defrule files-read-workspace-config
  (effect (proposal ?id) (index -1) (kind read) (object path) (in-workspace TRUE) (class persistence) (target ?p))
  (proposal (id ?id) (target file|tool))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-read-workspace-config)
                    (reason (str-cat "read of a start-up or config file that may hold tokens: " ?p)))))

;; Approves writing, appending or deleting a file inside the workspace (everyday work).
;; Persistence files (git hooks, .envrc …) are escalated by persistence.clp, which wins.
(defrule files-write-workspace
  (effect (proposal ?id) (index -1) (kind write|delete) (in-workspace TRUE))
  (proposal (id ?id) (target file))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule files-write-workspace)
                    (reason "write inside the workspace"))))

;; Stops any command writing or deleting a file outside the workspace: `echo x > /etc/hosts`,
;; `make &> /tmp/build.log`, `sort -o ~/x`, `pytest --basetemp=/`, `tar xf a.tar -C /`,
;; `cp -r x ~/.ssh/`, `truncate -s0 /var/log/syslog`, `mv ws /tmp/gone`. The null and
;; standard devices are fine. Targets known only at run time are judged by
;; files-shell-write-dynamic.
(defrule files-shell-write-outside-workspace
  (effect (proposal ?id) (index ~-1) (kind ?k&write|delete) (object path) (in-workspace FALSE) (dynamic FALSE)
          (target ?p&~"/dev/null"&~"/dev/stdout"&~"/dev/stderr"&~"/dev/tty") (program ?prog&~"crontab") (via ~"program"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule files-shell-write-outside-workspace)
                    (reason (str-cat ?prog " " (if (eq ?k delete) then "deletes" else "writes")
                                     " outside the workspace: " ?p)))))

;; Asks a human for `git clean -f…`: it deletes every untracked file of the workspace,
;; including new work not yet committed and local settings (`git clean -n` only lists).
(defrule files-git-clean
  (effect (proposal ?id) (index ?i) (kind delete) (program "git") (subcommand "clean"))
  (shell-command (proposal ?id) (index ?i) (argv $?v))
  (test (not (or (member$ "-n" ?v) (member$ "--dry-run" ?v))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-git-clean)
                    (reason "git clean deletes every untracked file"))))

;; Asks a human before deleting a repository's history (`rm -rf .git`, `rm -rf vendor/x/.git`,
;; `rm -rf .[!.]*`).
(defrule files-delete-git-dir
  (effect (proposal ?id) (kind delete) (target ?p&:(files-git-dir-target-p ?p)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-delete-git-dir)
                    (reason (str-cat "deletes a repository's history: " ?p)))))

;; Asks a human before a command reads a raw device or root's home (`dd if=/dev/sda`,
;; `cat /dev/mem`, `ls -la /root`): a whole disk holds every secret on it.
(defrule files-shell-read-device
  (effect (proposal ?id) (index ~-1) (kind read) (class system) (target ?p&:(not (files-system-read-ok ?p))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-shell-read-device)
                    (reason (str-cat "reads a device or root's home: " ?p)))))

;; Asks a human when running a program writes outside the workspace by itself, not through
;; a word of the command (`go get` updates ~/go, `systemctl enable` links a unit,
;; `launchctl load` installs a job, `pip install` without a venv writes site-packages):
;; what the effects table says the program does when it runs at all.
(defrule files-shell-program-writes-outside
  (effect (proposal ?id) (index ~-1) (kind ?k&write|delete) (object path) (in-workspace FALSE) (via "program")
          (target ?p) (program ?prog&~"crontab"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-shell-program-writes-outside)
                    (reason (str-cat ?prog " writes outside the workspace when it runs: " ?p)))))

;; Asks a human when a command deletes or overwrites something it does not name as a file:
;; `git branch -D x`, `git push --force`, `git reset --hard` on refs, `docker rm`: not the
;; workspace's files, and not always recoverable.
(defrule files-shell-delete-unnamed
  (effect (proposal ?id) (index ~-1) (kind ?k&write|delete) (object none) (program ?prog) (subcommand ?s) (via ?v))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-shell-delete-unnamed)
                    (reason (str-cat ?prog " " ?s " " ?v (if (eq ?k delete) then " deletes" else " overwrites")
                                     " something that is not a workspace file")))))

;; Asks a human for file-changing programs whose operands come from another command's output
;; (`… | xargs rm -f`, `… | xargs -I{} mv {} /x`, `parallel chmod …`): the targets cannot be
;; judged here.
(defrule files-shell-operands-from-input
  (shell-command (proposal ?id) (wrappers $? ?w&"xargs"|"parallel" $?)
                 (program ?p&"rm"|"mv"|"cp"|"chmod"|"chown"|"chgrp"|"shred"|"truncate"|"tee"|"dd"|"ln"
                             |"install"|"rsync"|"unlink"|"rmdir"|"sed"|"perl"|"touch"|"mkdir"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-shell-operands-from-input)
                    (reason (str-cat ?p " changes files named by another command's output (" ?w ")")))))

;; Asks a human for writes and deletes outside the workspace whose target is only known at
;; run time (`echo x > $OUT`, `rm -rf "$DIR"/*`, `cp x "$(mktemp)"`): it may be anywhere.
(defrule files-shell-write-dynamic
  (effect (proposal ?id) (index ~-1) (kind write|delete) (in-workspace FALSE) (dynamic TRUE) (target ?p))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-shell-write-dynamic)
                    (reason (str-cat "writes or deletes a target known only at run time: " ?p)))))

;; Stops deleting the workspace itself (`rm -rf .`, `cmake -E rm -rf .`, `find . -delete`,
;; `git clean` aside): everything the agent works on, gone.
(defrule files-delete-workspace-root
  (effect (proposal ?id) (kind delete) (program ~"find") (subcommand ~"clean") (target ?p&:(eq ?p (workspace-root))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule files-delete-workspace-root)
                    (reason "deletes the whole workspace"))))

;; Stops `find . -delete` and `find . -type f -delete` on the workspace root: without a
;; name, path or regex test, find deletes everything under it. (`find . -name '*.pyc'
;; -delete` is everyday work.)
(defrule files-find-delete-workspace
  (effect (proposal ?id) (index ?i) (kind delete) (program "find") (target ?p&:(eq ?p (workspace-root))))
  (shell-command (proposal ?id) (index ?i) (argv $?v))
  (test (files-find-unfiltered-delete-p ?v))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule files-find-delete-workspace)
                    (reason "find deletes everything in the workspace"))))

;; TRUE when a symbolic link LINK -> TARGET made in CWD leads outside the workspace: a
;; relative TARGET is read from the link's directory, not from CWD (`ln -s ../shared
;; lib/shared` stays inside).
(deffunction files-symlink-outside-p (?target ?link ?cwd)
  (bind ?to (if (or (str-prefix "/" ?target) (str-prefix "~" ?target) (str-prefix "$" ?target))
                then (path-normalize ?target ?cwd)
                else (if (or (eq ?link ".") (eq ?link "..") (str-suffix "/" ?link))
                         then (path-normalize ?target (path-normalize ?link ?cwd))
                         else (path-normalize (str-cat ?link "/../" ?target) ?cwd))))
  (not (in-workspace ?to)))

;; Asks a human before making a symbolic link in the workspace that leads outside it
;; (`ln -s /etc etclink`, `ln -sf ~/.config cfg`): every later read or write through the
;; link looks like workspace work but is not.
(defrule files-symlink-outside-workspace
  (or (shell-command (proposal ?id) (program "ln") (flags $? "-s"|"--symbolic" $?) (cwd ?cwd) (args $? ?t ?l&:(files-symlink-outside-p ?t ?l ?cwd)))
      (shell-command (proposal ?id) (program "cp") (flags $? "-s"|"--symbolic" $?) (cwd ?cwd) (args $? ?t ?l&:(files-symlink-outside-p ?t ?l ?cwd))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-symlink-outside-workspace)
                    (reason (str-cat "symbolic link " ?l " leads outside the workspace: " ?t)))))

;; Asks a human before reading a file whose name is only known at run time outside the
;; workspace (`cat $(echo L2V0Yy9zaGFkb3c= | base64 -d)`, `cat "$F"`): it may be any file.
(defrule files-shell-read-dynamic
  (effect (proposal ?id) (index ?ri&~-1) (kind read) (in-workspace FALSE) (dynamic TRUE) (target ?p))
  ;; a loop variable over workspace paths, used in the same directory, names those
  ;; (`for f in src/*.py; do wc -l "$f"; done`)
  (not (and (shell-command (proposal ?id) (index ?ri) (cwd ?rc))
            (shell-assignment (proposal ?id) (index ?di) (name ?dn&:(or (eq ?p (str-cat "$" ?dn))
                                                                          (eq ?p (str-cat "${" ?dn "}"))))
                              (value ?dv))
            (shell-command (proposal ?id) (index ?di) (cwd ?rc))
            (test (everyday-workspace-words-p ?dn ?dv ?rc))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-shell-read-dynamic)
                    (reason (str-cat "reads a file known only at run time: " ?p)))))

;; Asks a human before reading files elsewhere in the home directory, the home directory
;; itself or one of its ancestors from the shell (`grep -r password ~/.config`,
;; `cat ~/notes.txt`, `grep -r x /`): other projects and settings hold secrets the
;; credential class does not name, whatever class their name has (`cat ~/.cargo/config`, a
;; build file; `cat ~/.bundle/config`, named like a repository's config).
;; (A directory holding Warden's own files, `/` among them, is judged here like any other.)
(defrule files-shell-read-home
  (effect (proposal ?id) (index ~-1) (kind read) (in-workspace FALSE) (dynamic FALSE) (class ~credential&~secrets-config&~persistence&~system&~warden-own) (program ~"ln")
          (target ?p&:(not (files-outside-read-ok ?p))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-shell-read-home)
                    (reason (str-cat "reads outside the workspace in the home directory: " ?p)))))

;; Asks a human before a command reads a start-up or config file (`cat ~/.bashrc`,
;; `cat .envrc`, `cat .git/config`, `cat /etc/passwd`): direnv files, git config and shell
;; start-up files often carry tokens.
(defrule files-shell-read-config
  (effect (proposal ?id) (index ~-1) (kind read) (class persistence) (target ?p))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-shell-read-config)
                    (reason (str-cat "reads a start-up or config file that may hold tokens: " ?p)))))

;; Asks a human before a program reads a repository's directory as a whole (`grep -r
;; extraheader .git`, `tar czf r.tgz .git`, `cp -r .git /tmp`): it reads .git/config, whose
;; remote URLs and http.extraheader carry tokens. Listing names (ls, find, du, tree) is not.
(defrule files-shell-read-repository-dir
  (effect (proposal ?id) (index ~-1) (kind read) (object path)
          (program ?p&~"git"&~"ls"&~"du"&~"stat"&~"find"&~"fd"&~"tree"&~"file"&~"exa"&~"eza")
          (target ?t&:(str-suffix "/.git" ?t)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-shell-read-repository-dir)
                    (reason (str-cat ?p " reads the whole repository directory " ?t ", its config included")))))

;; Asks a human before a program other than git writes or deletes a repository's own store
;; (`rm -rf .git/objects`, `echo > .git/HEAD`, `truncate -s0 .git/packed-refs`, a file write
;; to `.git/refs/heads/main`): objects, refs and reflogs are the history.
(defrule files-repository-store-changed
  (effect (proposal ?id) (kind write|delete) (class repository) (program ~"git") (target ?p))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-repository-store-changed)
                    (reason (str-cat "changes a repository's history store: " ?p)))))

;; Asks a human when find runs a deleting command on everything it finds
;; (`find . -type f -exec rm {} +`, `find . -exec shred -u {} \;`): without a name, path or
;; regex test that is every file under the start points, as `find . -delete` is.
;; (`find . -name '*.pyc' -exec rm {} +` is everyday work.)
(defrule files-find-exec-delete-unfiltered
  (effect (proposal ?id) (kind delete) (target ?t&:(str-suffix "/{}" ?t)) (program ?p))
  (shell-command (proposal ?id) (program "find") (argv $?v))
  (test (files-find-unfiltered-p ?v))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-find-exec-delete-unfiltered)
                    (reason (str-cat "find runs " ?p " on every file it finds")))))

;; Asks a human for a delete of every file at the top of the workspace (`shred -u *`,
;; `rm -f *`, `unlink .*`): a glob over the workspace root, not over a build directory.
(defrule files-delete-workspace-glob
  (effect (proposal ?id) (kind delete) (dynamic TRUE)
          (target ?t&:(or (eq ?t (str-cat (workspace-root) "/*")) (eq ?t (str-cat (workspace-root) "/.*")))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-delete-workspace-glob)
                    (reason (str-cat "deletes every file at the top of the workspace: " ?t)))))

;; TRUE for a path spelled for another system: a backslash (`..\..\.bashrc`,
;; `\home\user\.ssh\id_rsa`), a drive letter (`C:\Users\…`, `c:/…`) or a `%VAR%` reference.
;; Here these are odd file names inside the workspace; an actuator on Windows reads them as
;; the user's files, so the workspace test cannot be trusted for them.
(deffunction files-foreign-path-p (?v)
  (or (neq (str-index "\\" ?v) FALSE)
      (and (>= (str-length ?v) 2) (eq (sub-string 2 2 ?v) ":"))
      (and (neq (str-index "%" ?v) FALSE)
           (neq (str-index "%" (sub-string (+ 1 (str-index "%" ?v)) (str-length ?v) ?v)) FALSE))))

;; Asks a human for a file proposal whose path is spelled for another system (see above).
(defrule files-path-foreign-spelling
  (param (proposal ?id) (key "payload.path") (value ?v&:(stringp ?v)&:(files-foreign-path-p ?v)))
  (proposal (id ?id) (target file))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-path-foreign-spelling)
                    (reason (str-cat "the path is spelled for another system: " ?v)))))
