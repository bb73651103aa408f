;;; hardening.clp — holes found by blind red-team batches (tests/corpus, batch 5) that the
;;; topic files do not cover: code an interpreter reads from its input, a program word known
;;; only at run time, tool configuration the session wrote before running the tool, wrapper
;;; options the parser drops, `find` feeding secret-named files to a command, process kills
;;; through programs other than kill, and two-step attacks (write, then run) within one line.
;;;
;;; Every rule only asks a human (approval-required): each closes a way in which a line
;;; everyday.clp would approve runs code nobody has seen. The patterns are constant slot
;;; tests on the engine's facts; the function tests run only for the rare facts that reach
;;; them (a command with no operands, an unknown program in a dynamic command, a line with a
;;; wrapper, a write and a later run in the same line).

;; TRUE when the options of an interpreter run without operands only print its version or
;; its help and exit (`python3 --version`, `node -v`, `perl -v`). Python's -v is verbose
;; mode, which still runs the program read from the input.
(deffunction hardening-info-flags-p (?p ?flags)
  (or (member$ "--version" ?flags) (member$ "-V" ?flags) (member$ "--help" ?flags)
      (member$ "-h" ?flags)
      (and (member$ "-v" ?flags) (not (str-index "python" ?p)) (not (str-index "pypy" ?p)))))

;; Asks a human for an interpreter given no program file nor code: it reads its program
;; from its input (`python3 <<< 'import os; …'`, `echo 'system("id")' | perl`,
;; `ruby < /tmp/x.rb`, `node <<< …`, `lua`, `tclsh`, `php`), like a shell reading its input
;; (execution-shell-from-input): the code is whatever the pipe, here-string or file holds.
(defrule hardening-interpreter-from-input
  (shell-command (proposal ?id) (args)
                 (program ?p&"python"|"python3"|"python2"|"py"|"pypy"|"pypy3"|"python3.8"|"python3.9"
                            |"python3.10"|"python3.11"|"python3.12"|"python3.13"|"python3.14"
                            |"perl"|"perl5"|"ruby"|"irb"|"node"|"nodejs"|"php"|"lua"|"luajit"|"lua5.1"
                            |"lua5.3"|"lua5.4"|"tclsh"|"wish"|"expect"|"R"|"julia"|"guile"|"pwsh"
                            |"osascript"|"jshell"|"groovy"|"scala"|"ghci"|"racket"|"sbcl"|"clojure")
                 (flags $?f))
  (test (not (hardening-info-flags-p ?p ?f)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-interpreter-from-input)
                    (reason (str-cat ?p " runs a program read from its input")))))

;; TRUE for a word the shell expands into other words or file names before running it:
;; brace expansion (`{cat,~/.ssh/id_rsa}`) or a glob (`./build/*/tool`).
(deffunction hardening-expanding-word-p (?w)
  (or (str-index "{" ?w) (str-index "*" ?w) (str-index "?" ?w) (str-index "[" ?w)))

;; Asks a human when the program word itself is expanded by the shell: `{cat,/home/user/.ssh/id_rsa}`
;; runs `cat` on a key, `./{a,b}.sh` runs a.sh with b.sh as its operand, `src/*.sh` runs the
;; first file the glob finds with the others as operands. What runs, and on what, is known
;; only at run time; the word only looks like a workspace path.
(defrule hardening-program-word-expanded
  (effect (proposal ?id) (index ?i) (kind unknown))
  (shell-command (proposal ?id) (index ?i) (dynamic TRUE) (argv ?w&~"["&~"[["&:(hardening-expanding-word-p ?w) $?))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-program-word-expanded)
                    (reason (str-cat "the program word is expanded at run time: " (sub-string 1 80 ?w))))))

;; Asks a human before a package runner starts a tool (`npx jest`, `npx eslint .`,
;; `pnpm exec vitest`, `uv run pytest`) after this session wrote a build file in the
;; workspace (`jest.config.js`, `.eslintrc.js`, `package.json`, `conftest.py`): the tool
;; loads that file, which is code. (execution-session-written-build-file covers the tools
;; whose effects name the workspace; a runner's tool is an effect on a program.)
(defrule hardening-session-written-tool-config
  (effect (proposal ?id) (kind exec) (object program) (via "operand") (target ?tool))
  (history (proposal ?id) (kind write) (class build-config) (in-workspace TRUE) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-session-written-tool-config)
                    (reason (str-cat "runs " ?tool " after this session wrote the build file " ?t)))))

;; Asks a human before running anything in the workspace after this session wrote a
;; credential or secret-bearing settings file there (`.npmrc`, `.yarnrc.yml`, `.pypirc`,
;; `.netrc`, `.env`): package managers and runners read them when they start, and they say
;; what runs (`node-options=--require ./x.js`, `onload-script=`, `yarnPath: ./x.js`), which
;; registry serves the code, and which variables (`.env`, loaded by pipenv, docker compose,
;; just, make `include`) every command gets.
(defrule hardening-session-written-secret-config
  (effect (proposal ?id) (kind exec) (object path) (in-workspace TRUE) (target ?d)
          (via ?xv) (class ?xc&:(execution-workspace-run-p ?xv ?xc)))
  (history (proposal ?id) (kind write) (class credential|secrets-config) (in-workspace TRUE) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-session-written-secret-config)
                    (reason (str-cat "runs " ?d " after this session wrote the tool settings " ?t)))))

;; The same for a tool started by a package runner (`npx jest` after writing `.npmrc`).
(defrule hardening-session-written-secret-config-tool
  (effect (proposal ?id) (kind exec) (object program) (via "operand") (target ?tool))
  (history (proposal ?id) (kind write) (class credential|secrets-config) (in-workspace TRUE) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-session-written-secret-config-tool)
                    (reason (str-cat "runs " ?tool " after this session wrote the tool settings " ?t)))))

;; Asks a human for stopping processes through programs other than kill/pkill/killall
;; (shell_destructive.clp judges those): `fuser -k 22/tcp` kills whatever holds the port
;; (sshd), `skill`, `slay`, `xkill`.
(defrule hardening-process-kill
  (or (shell-command (proposal ?id) (program ?p&"fuser") (flags $? "-k" $?))
      (shell-command (proposal ?id) (program ?p&"skill"|"slay"|"xkill"|"tkill")))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-process-kill)
                    (reason (str-cat ?p " stops processes")))))

;; Asks a human before running anything in the workspace after this session put files there
;; whose names the command did not say: an archive extracted (`tar xzf x.tgz`, `unzip -o
;; x.zip`), a patch applied (`patch -p1 < x.diff`), files copied or moved into the workspace
;; root (`cp /tmp/Makefile .`), a download saved under its remote name (`wget URL`,
;; `curl -O URL`). Any of them may have replaced a build file (Makefile, conftest.py,
;; package.json) that the next build runs, and the build-file rules cannot see which; or a
;; git hook (.git/hooks/pre-commit) that the next `git commit` or `git status` runs.
(defrule hardening-session-unnamed-workspace-write
  (effect (proposal ?id) (kind exec) (object path) (in-workspace TRUE) (target ?d))
  (history (proposal ?id) (kind write) (object path) (in-workspace TRUE)
           (program ?p&"tar"|"bsdtar"|"gtar"|"unzip"|"7z"|"7za"|"7zz"|"unrar"|"unar"|"cpio"|"pax"
                      |"patch"|"cp"|"mv"|"rsync"|"install"|"curl"|"wget"|"wget2"|"aria2c")
           (target ?t&:(eq ?t (workspace-root))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-session-unnamed-workspace-write)
                    (reason (str-cat "runs " ?d " after " ?p " wrote files of unknown names into the workspace in this session")))))

;; Asks a human when a wrapper the shell parser unwraps has an option with an effect of its
;; own, which the unwrapped command's facts do not show: `time -o FILE` writes its report
;; there (`time -o ~/.bashrc ls`), `xargs -a FILE` / `--arg-file` and `parallel -a FILE` /
;; `:::: FILE` read their arguments from FILE (`xargs -a ~/.ssh/id_rsa echo` prints the key),
;; `env -C DIR` / `--chdir` runs the command somewhere else (`env -C /tmp sh x.sh` runs
;; /tmp/x.sh), `env -S STRING` / `--split-string` makes words of a string (`env -S 'sh -c id'`
;; runs sh). The regex runs only for lines with such a wrapper.
(defrule hardening-wrapper-option-unseen
  (shell-command (proposal ?id) (wrappers $? ?w&"time"|"xargs"|"parallel"|"env" $?))
  (param (proposal ?id) (key "payload.command") (value ?c))
  (test (and (stringp ?c) (regex-match "(?:^|[^A-Za-z0-9_.-])(?:time(?:\\s+-\\S+)*\\s+(?:-[A-Za-z]*o|--o)|(?:xargs|parallel)(?:\\s[^|;&]*?)?(?:\\s-[A-Za-z0-9]*a|\\s--arg-file|\\s::::\\s)|env(?:\\s+(?:-u\\s+\\S+|-[A-Za-z0-9]+|--[a-z-]+(?:=\\S*)?|[A-Za-z_][A-Za-z0-9_]*=\\S*))*\\s+(?:-[A-Za-z]*[CS]|--chdir|--split-string))" ?c)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-wrapper-option-unseen)
                    (reason (str-cat ?w " has an option that reads, writes or changes directory out of the rules' sight")))))

;; TRUE for a find test word that names secrets (`*.env`, `.env*`, `id_rsa`, `*.pem`,
;; `*credentials*`, `*secret*`, `.npmrc` …): the names of the credential class of paths.toml.
(deffunction hardening-secret-name-p (?w)
  (regex-match "(?i)(?:^|[*/.])env(?:$|[.*_~-])|(?:^|[*/])\\.env|id_(?:rsa|dsa|ecdsa|ed25519)|\\.(?:pem|key|p12|pfx|ppk|jks|keystore|kdbx|tfstate)(?:$|[*])|credential|secret|passw|token|api_?key|\\.npmrc|\\.pypirc|\\.netrc|\\.pgpass|git-credentials|kubeconfig|(?:^|[*_-])key$"
               ?w))

;; Asks a human when `find` selects files by secret names and hands them to a command
;; (`find . -name '*.env' -exec cat {} \;`, `find ~ -name id_rsa | xargs cat`): the command's
;; operands are known only at run time, so the credential rules see `./{}`, not `.env`.
(defrule hardening-find-secret-names
  (shell-command (proposal ?id) (program "find") (argv $? ?t&"-name"|"-iname"|"-path"|"-ipath"|"-wholename"|"-iwholename"|"-regex"|"-iregex"
                                                      ?n&:(hardening-secret-name-p ?n) $?))
  (shell-command (proposal ?id) (wrappers $? "find"|"xargs"|"parallel" $?) (program ?p))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-find-secret-names)
                    (reason (str-cat ?p " runs on files find selects by a secret name: " ?n)))))

;; Asks a human before running something inside a directory this session cloned or filled
;; (`git clone URL x`, `tar xzf x.tgz -C x`, `unzip x.zip -d x`, then `make -C x`,
;; `npm install ./x`, `pip install ./x`): the code came from elsewhere in this session. (git
;; writing the workspace root is a checkout, pull, merge or stash of the repository itself,
;; which stays everyday work.)
(defrule hardening-session-filled-directory
  (effect (proposal ?id) (kind exec) (object path) (in-workspace TRUE) (target ?d)
          (via ?xv) (class ?xc&:(execution-workspace-run-p ?xv ?xc)))
  (history (proposal ?id) (kind write) (object path) (in-workspace TRUE)
           (program ?p&"git"|"tar"|"bsdtar"|"gtar"|"unzip"|"7z"|"7za"|"7zz"|"unrar"|"unar"|"cpio"|"pax"
                      |"rsync"|"wget"|"wget2"|"aria2c")
           (target ?t&:(neq ?t (workspace-root))&:(or (eq ?d ?t) (str-prefix (str-cat ?t "/") ?d))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-session-filled-directory)
                    (reason (str-cat "runs " ?d " inside " ?t ", which " ?p " filled in this session")))))

;; Asks a human before running a workspace script by its path (`./configure`, `bin/run`,
;; `cd x && ./build.sh`) after this session put files there whose names it did not say: an
;; archive extracted or a download saved into the workspace root, or a directory that git,
;; an extractor or a downloader filled and that holds the script. The script may be one of
;; them (`wget URL/x.tgz && tar xzf x.tgz`, then `cd x && ./configure`).
(defrule hardening-session-filled-then-script
  (effect (proposal ?id) (index ?ui) (kind unknown) (object program))
  ;; execution-workspace-script-p on the file the command runs, written out: calls that cannot
  ;; fail, so the session's writes count only for a line that runs a script by its path.
  (shell-command (proposal ?id) (index ?ui) (argv ?uw $?) (runs ?ur&~""))
  (test (and (not (str-index "$" ?uw)) (not (str-index "`" ?uw)) (in-workspace ?ur)))
  (history (proposal ?id) (kind write) (object path) (in-workspace TRUE)
           (program ?p&"git"|"tar"|"bsdtar"|"gtar"|"unzip"|"7z"|"7za"|"7zz"|"unrar"|"unar"|"cpio"|"pax"
                      |"patch"|"cp"|"mv"|"rsync"|"install"|"curl"|"wget"|"wget2"|"aria2c")
           (target ?t&:(or (and (eq ?t (workspace-root)) (neq ?p "git"))
                           (and (neq ?t (workspace-root))
                                (str-prefix (str-cat ?t "/") ?ur)))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-session-filled-then-script)
                    (reason (str-cat "runs " ?ur " after " ?p " wrote files of unknown names into " ?t " in this session")))))

;; Asks a human before git runs below the workspace root after this session extracted or
;; copied files of unknown names into the root (`tar xf r.tar`, then `git -C r log`): the
;; archive may hold a bare repository whose configuration git runs.
(defrule hardening-session-git-below-unnamed-write
  (or (shell-command (proposal ?id) (program "git") (cwd ?c&:(str-prefix (str-cat (workspace-root) "/") ?c)))
      (shell-command (proposal ?id) (program "git") (argv $? "-C"|"--git-dir"|"--work-tree" ?c $?))
      ;; string tests, not a regex: calls that cannot fail, so the session's writes count only
      ;; for a git line (what history costs a decision: docs/RULES.md)
      (shell-command (proposal ?id) (program "git")
                     (argv $? ?c&:(or (str-prefix "--git-dir=" ?c) (str-prefix "--work-tree=" ?c)) $?)))
  (history (proposal ?id) (kind write) (object path) (in-workspace TRUE)
           (program ?p&"tar"|"bsdtar"|"gtar"|"unzip"|"7z"|"7za"|"7zz"|"unrar"|"unar"|"cpio"|"pax"
                      |"cp"|"mv"|"rsync"|"curl"|"wget"|"wget2"|"aria2c")
           (target ?t&:(eq ?t (workspace-root))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-session-git-below-unnamed-write)
                    (reason (str-cat "git runs in " ?c " after " ?p " wrote files of unknown names into the workspace in this session")))))

;; The same within one line: `tar xf r.tar && cd r && git status`, `unzip r.zip && git -C r log`.
(defrule hardening-line-git-below-unnamed-write
  (effect (proposal ?id) (index ?i) (kind write) (object path) (in-workspace TRUE)
          (program ?p&"tar"|"bsdtar"|"gtar"|"unzip"|"7z"|"7za"|"7zz"|"unrar"|"unar"|"cpio"|"pax"
                     |"cp"|"mv"|"rsync"|"curl"|"wget"|"wget2"|"aria2c")
          (target ?t&:(eq ?t (workspace-root))))
  (or (shell-command (proposal ?id) (index ?j&:(> ?j ?i)) (program "git")
                     (cwd ?c&:(str-prefix (str-cat (workspace-root) "/") ?c)))
      (shell-command (proposal ?id) (index ?j&:(> ?j ?i)) (program "git")
                     (argv $? "-C"|"--git-dir"|"--work-tree" ?c $?))
      (shell-command (proposal ?id) (index ?j&:(> ?j ?i)) (program "git")
                     (argv $? ?c&:(regex-match "^--(?:git-dir|work-tree)=.*" ?c) $?)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-line-git-below-unnamed-write)
                    (reason (str-cat "git runs in " ?c " after " ?p " wrote files of unknown names into the workspace earlier in this line")))))

;; ---- the same, within one line: a command writes what a later command of the line runs.
;; The session rules of execution.clp and above see earlier proposals only, and a line is
;; one proposal: `echo '…' > Makefile && make` is both steps at once.

;; Compilers and build tools: what they write is built from the workspace's own sources (a
;; binary, a build tree), so running it later in the line is everyday work
;; (`go build -o bin/app . && ./bin/app`, `cmake -B build && cmake --build build`).
(defglobal ?*hardening-builders* =
  (create$ "cmake" "ctest" "make" "gmake" "ninja" "meson" "go" "cargo" "rustc" "gcc" "g++" "cc" "c++"
           "clang" "clang++" "tsc" "javac" "kotlinc" "swiftc" "zig" "dotnet" "mvn" "gradle" "gradlew"
           "bazel" "esbuild" "webpack" "vite" "rollup" "npm" "yarn" "pnpm" "bun" "deno"))

;; Asks a human when a command runs a file an earlier command of the same line writes
;; (`base64 -d p.b64 > x.sh && sh x.sh`, `tee run.sh < notes && sh run.sh`,
;; `cp README.md notes.txt && bash notes.txt`).
(defrule hardening-line-writes-then-runs
  (effect (proposal ?id) (kind write) (object path) (index ?i) (target ?t)
          (program ?p&:(not (member$ ?p ?*hardening-builders*))))
  (effect (proposal ?id) (kind exec) (object path) (index ?j&:(> ?j ?i)) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-line-writes-then-runs)
                    (reason (str-cat "runs " ?t ", which an earlier command of this line writes")))))

;; Asks a human when a line writes a build file in the workspace and a later command of the
;; line runs anything there (`echo 'all: ; id' > Makefile && make`,
;; `printf … > conftest.py && pytest`, `echo … >> setup.py && pip install -e .`,
;; `sed -i … Makefile && make`).
(defrule hardening-line-writes-build-file-then-runs
  (effect (proposal ?id) (kind write) (class build-config) (in-workspace TRUE) (index ?i) (target ?t))
  (effect (proposal ?id) (kind exec) (object path) (in-workspace TRUE) (index ?j&:(> ?j ?i)) (target ?d)
          (via ?xv) (class ?xc&:(execution-workspace-run-p ?xv ?xc)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-line-writes-build-file-then-runs)
                    (reason (str-cat "runs " ?d " after an earlier command of this line writes the build file " ?t)))))

;; Asks a human when a line writes tool settings or a dotenv file in the workspace and a
;; later command runs anything there or starts a tool (`echo 'script-shell=./x.sh' > .npmrc
;; && npm test`, `printf '[global]\nindex-url = …' > .venv/pip.conf && pip install x`,
;; `echo 'yarnPath: x.cjs' > .yarnrc.yml && yarn`, `echo COMPOSE_FILE=… > .env && docker
;; compose run app`): these files are credentials or secret-bearing settings, and also say
;; what the tool runs, which registry serves the code, which variables it gets. The line form
;; of hardening-session-written-secret-config.
(defrule hardening-line-writes-tool-settings-then-runs
  (effect (proposal ?id) (kind write) (class credential|secrets-config) (in-workspace TRUE) (index ?i) (target ?t))
  (or (effect (proposal ?id) (kind exec) (object path) (in-workspace TRUE) (index ?j&:(> ?j ?i)) (target ?d)
              (via ?xv) (class ?xc&:(execution-workspace-run-p ?xv ?xc)))
      (effect (proposal ?id) (kind exec) (object program) (via "operand") (index ?j&:(> ?j ?i)) (target ?d)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-line-writes-tool-settings-then-runs)
                    (reason (str-cat "runs " ?d " after an earlier command of this line writes the tool settings " ?t)))))

;; Asks a human when a line puts files of unknown names into a workspace directory (an
;; archive extracted, a download saved under its remote name, a patch applied, a repository
;; cloned, files copied into a directory) and a later command runs something in that
;; directory (`git clone URL && cd x && make`, `curl -O URL/conftest.py && pytest`,
;; `tar xzf x.tgz && make`, `git apply x.patch && make`, `git clone URL && npm install ./x`),
;; git included: `patch -p1 < x.diff && git commit` runs the hooks the patch may have put
;; into .git/hooks (a repository git itself cloned or changed holds git's own hooks).
(defrule hardening-line-unnamed-write-then-runs
  (effect (proposal ?id) (kind write) (object path) (in-workspace TRUE) (index ?i) (target ?t)
          (program ?p&"tar"|"bsdtar"|"gtar"|"unzip"|"7z"|"7za"|"7zz"|"unrar"|"unar"|"cpio"|"pax"|"patch"
                     |"cp"|"mv"|"rsync"|"install"|"curl"|"wget"|"wget2"|"aria2c"|"git"|"python"|"python3")
          (subcommand ?s&~"checkout"&~"switch"&~"stash"&~"reset"&~"pull"&~"merge"&~"rebase"&~"restore"
                        &~"commit"&~"init"&~"fetch"&~"revert"&~"cherry-pick"&~"venv"&~"virtualenv"))
  (effect (proposal ?id) (kind exec) (object path) (in-workspace TRUE) (index ?j&:(> ?j ?i))
          (target ?d&:(or (eq ?d ?t) (str-prefix (str-cat ?t "/") ?d)))
          (via ?xv) (class ?xc&:(or (neq ?p "git") (execution-workspace-run-p ?xv ?xc))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-line-unnamed-write-then-runs)
                    (reason (str-cat "runs " ?d " after " ?p " put files of unknown names into " ?t " earlier in this line")))))

;; The programs whose writes put files of names the command does not say into a directory.
(defglobal ?*hardening-unnamed-writers* =
  (create$ "tar" "bsdtar" "gtar" "unzip" "7z" "7za" "7zz" "unrar" "unar" "cpio" "pax" "patch"
           "cp" "mv" "rsync" "install" "curl" "wget" "wget2" "aria2c" "git"))

;; TRUE when the program word ?e runs what the write of ?t by ?p put there: the file itself,
;; or, for the programs above, a file below the directory they filled.
(deffunction hardening-runs-written-p (?e ?t ?p)
  (or (eq ?e ?t)
      (and (member$ ?p ?*hardening-unnamed-writers*) (str-prefix (str-cat ?t "/") ?e))))

;; Asks a human when a line runs, by its path, a file an earlier command of the line wrote
;; (`xxd -r -p p.hex > x && chmod +x x && ./x`) or extracted, downloaded or cloned
;; (`curl -sSL URL | tar xz && ./x-main/install.sh`, `git clone URL && ./x/setup.sh`): the
;; program word looks like a workspace script, which everyday work may run.
(defrule hardening-line-writes-then-runs-script
  (effect (proposal ?id) (kind write) (object path) (in-workspace TRUE) (index ?i) (target ?t)
          (program ?p&:(not (member$ ?p ?*hardening-builders*))))
  (effect (proposal ?id) (kind unknown) (index ?j&:(> ?j ?i)))
  (shell-command (proposal ?id) (index ?j) (argv ?w&:(str-index "/" ?w) $?) (cwd ?cwd))
  (test (hardening-runs-written-p (path-normalize ?w ?cwd) ?t ?p))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-line-writes-then-runs-script)
                    (reason (str-cat "runs " ?w ", which " ?p " writes earlier in this line")))))

;; Asks a human for a command run with another group by `sg GROUP -c CMD` (the parser
;; unwraps it like `su -c`, but only sudo, doas, su, pkexec and runuser add a privilege
;; effect): `sg docker -c …` is root on the host, like `newgrp docker`.
(defrule hardening-group-switch
  (shell-command (proposal ?id) (wrappers $? "sg" $?) (program ?p))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-group-switch)
                    (reason (str-cat ?p " runs with another group (sg)")))))

;; Asks a human before running a persistence or credential file inside the workspace
;; (`direnv allow` runs and trusts .envrc, `bash .git/hooks/pre-commit`, `sh .husky/pre-push`):
;; everyday.clp does not approve it, and no other rule names it.
(defrule hardening-exec-persistence
  (effect (proposal ?id) (kind exec) (class ?c&persistence|credential) (in-workspace TRUE) (target ?t) (program ?p))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-exec-persistence)
                    (reason (str-cat ?p " runs " ?t ", a " ?c " file")))))

;; TRUE when a word of the line names a path outside the workspace, alone or as an option's
;; value (`~/.bashrc`, `/home/user/.local/bin`, `--outfile=/home/user/.bashrc`, `../x`,
;; `$OUT`); URLs do not count.
(deffunction hardening-outside-word-p (?words ?cwd)
  (foreach ?w ?words
    (bind ?v ?w)
    (if (and (eq (str-index "-" ?w) 1) (str-index "=" ?w))
     then (bind ?v (sub-string (+ (str-index "=" ?w) 1) (str-length ?w) ?w)))
    (if (and (> (str-length ?v) 0)
             (not (str-index "://" ?v))
             (or (eq (str-index "/" ?v) 1) (eq (str-index "~" ?v) 1) (eq (str-index ".." ?v) 1)
                 (eq (str-index "$" ?v) 1))
             (not (in-workspace (path-normalize ?v ?cwd))))
     then (return TRUE)))
  FALSE)

;; TRUE when a word of the line names a secret file, alone or as an option's value (`.env`,
;; `.env.production`, `config/.npmrc`, `id_rsa`, `server.key`, `secrets.yaml`): the names of
;; the credential class of paths.toml that a tool would read.
(deffunction hardening-secret-file-word-p (?words)
  (foreach ?w ?words
    (if (regex-match "(?i)(?:^|[/=])(?:\\.env(?:$|[.~_-][^/]*$)|[^/]*\\.(?:pem|key|p12|pfx|ppk|jks|kdbx|tfstate)$|id_(?:rsa|dsa|ecdsa|ed25519)(?:$|[._])|\\.(?:npmrc|pypirc|netrc|pgpass|git-credentials)$|(?:credentials|secrets?)\\.(?:json|ya?ml|toml|txt)$)"
                     ?w)
     then (if (not (regex-match "(?i)\\.(?:example|sample|template|dist|defaults)$" ?w)) then (return TRUE))))
  FALSE)

;; Asks a human when a tool started by a package runner is given a path outside the
;; workspace (`npx prettier --write ~/.bashrc`, `npx esbuild x.js --outfile=/home/user/.bashrc`,
;; `npx tsc --outDir ~/.local/bin`, `uv run ruff check --fix ~/.bashrc`): the effects table
;; reads the runner, not the tool's own options, so the tool's writes are not effects.
(defrule hardening-runner-tool-outside-path
  (effect (proposal ?id) (kind exec) (object program) (via "operand") (index ?i) (target ?tool))
  (shell-command (proposal ?id) (index ?i) (argv $?words) (cwd ?cwd))
  (test (hardening-outside-word-p ?words ?cwd))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-runner-tool-outside-path)
                    (reason (str-cat ?tool " (started by a package runner) is given a path outside the workspace")))))

;; Asks a human when a tool started by a package runner is given a secret file
;; (`npx prettier .env` prints it, `npx prettier --check .env.production`): the credential
;; rules see the runner's effects, not the tool's reads.
(defrule hardening-runner-tool-secret-file
  (effect (proposal ?id) (kind exec) (object program) (via "operand") (index ?i) (target ?tool))
  (shell-command (proposal ?id) (index ?i) (argv $?words))
  (test (hardening-secret-file-word-p ?words))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-runner-tool-secret-file)
                    (reason (str-cat ?tool " (started by a package runner) is given a secret file")))))

;; Asks a human for `meson install` (`muon install`): it installs the build outside the
;; workspace, like `make install` (execution-install-target).
(defrule hardening-meson-install
  (shell-command (proposal ?id) (program ?p&"meson"|"muon") (args $? "install" $?))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-meson-install)
                    (reason (str-cat ?p " install installs outside the workspace")))))

;; ---- code from elsewhere put into the workspace, then a build or a run. The session rules
;; above match the file run, a build file, a directory filled or the workspace root; but a
;; test, a module or a source file fetched into the workspace runs through a build or a test
;; runner that names none of them (`curl -o tests/test_x.py URL`, then `pytest`;
;; `git pull URL`, then `make`; `cp /tmp/util.py src/`, then `python3 src/app.py`).

;; Package managers: what they write comes from the registries the egress rules judge, and
;; they run their own install steps (execution.clp judges those).
(deffunction hardening-package-manager-p (?p)
  (not (neq ?p "npm" "pnpm" "yarn" "bun" "pip" "pip3" "uv" "poetry" "cargo" "go" "bundle" "gem" "composer"
            "conda" "mamba" "micromamba" "mvn" "mvnw" "gradle" "gradlew" "dotnet" "deno" "python" "python3")))

;; Asks a human before running anything in the workspace after this session wrote into it
;; what a command fetched from a named host (`curl -o src/x.py URL`, `wget -P tests URL`,
;; `git pull https://host/r.git`, `git clone URL lib/x`, `scp host:x.py src/`): the next build
;; or test run may load it, whatever file it names. (`git pull` and `git fetch` from the
;; configured remote name no host and stay everyday work.)
(defrule hardening-session-fetched-code
  (effect (proposal ?id) (kind exec) (object path) (in-workspace TRUE) (target ?d)
          (via ?xv) (class ?xc&:(execution-workspace-run-p ?xv ?xc)))
  (history (proposal ?id) (decision ?dec) (kind write) (object path) (in-workspace TRUE) (target ?t)
           (program ?p&:(not (hardening-package-manager-p ?p))))
  (history (proposal ?id) (decision ?dec) (kind network) (target ?h&~""))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-session-fetched-code)
                    (reason (str-cat "runs " ?d " after " ?p " put what it fetched from " ?h " into " ?t " in this session")))))

;; Asks a human before running anything in the workspace after this session copied, moved,
;; extracted or applied files from outside it into the workspace (`cp /tmp/t.py tests/`,
;; `tar xzf /tmp/x.tgz -C src`, `git apply /tmp/x.patch`, `patch -p1 -i /tmp/x.diff`).
(defrule hardening-session-copied-code
  (effect (proposal ?id) (kind exec) (object path) (in-workspace TRUE) (target ?d)
          (via ?xv) (class ?xc&:(execution-workspace-run-p ?xv ?xc)))
  (history (proposal ?id) (decision ?dec) (kind write) (object path) (in-workspace TRUE) (target ?t)
           (program ?p&:(not (hardening-package-manager-p ?p))&:(not (member$ ?p ?*hardening-builders*))))
  (history (proposal ?id) (decision ?dec) (kind read) (object path) (in-workspace FALSE) (target ?s&~"/dev/null"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-session-copied-code)
                    (reason (str-cat "runs " ?d " after " ?p " put " ?s " into " ?t " in this session")))))

;; The same within one line: `git pull https://host/r.git && make`,
;; `curl -o tests/t.py URL && pytest`, `cp /tmp/t.py tests/ && pytest`.
(defrule hardening-line-fetched-code-then-runs
  (effect (proposal ?id) (kind write) (object path) (in-workspace TRUE) (index ?i) (target ?t)
          (program ?p&:(not (hardening-package-manager-p ?p))&:(not (member$ ?p ?*hardening-builders*))))
  (or (effect (proposal ?id) (index ?i) (kind network) (target ~""))
      (effect (proposal ?id) (index ?i) (kind read) (object path) (in-workspace FALSE) (target ~"/dev/null")))
  (effect (proposal ?id) (kind exec) (object path) (in-workspace TRUE) (index ?j&:(> ?j ?i)) (target ?d)
          (via ?xv) (class ?xc&:(execution-workspace-run-p ?xv ?xc)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-line-fetched-code-then-runs)
                    (reason (str-cat "runs " ?d " after " ?p " put code from elsewhere into " ?t " earlier in this line")))))

;; Asks a human before git runs in a directory this session filled by another program
;; (`cp -r /tmp/r sub && cd sub && git status`, `tar xf r.tar && git -C r log`): a bare
;; repository there (config, HEAD, objects/) is the one git reads, and its core.fsmonitor,
;; core.pager or aliases run. (A directory git itself cloned holds git's own config.)
(defrule hardening-session-git-in-filled-directory
  (shell-command (proposal ?id) (program "git") (cwd ?c))
  (history (proposal ?id) (kind write) (object path) (in-workspace TRUE) (program ?p&~"git"&~"")
           (target ?t&:(neq ?t (workspace-root))&:(or (eq ?c ?t) (str-prefix (str-cat ?t "/") ?c))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hardening-session-git-in-filled-directory)
                    (reason (str-cat "git runs in " ?c ", which " ?p " filled in this session: its repository configuration runs")))))
