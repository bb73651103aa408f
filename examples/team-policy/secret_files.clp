;; No reads of private keys and dotenv files: `*.pem`, `.env` and `.env.*` (but the templates
;; `.env.example`, `.env.sample`, `.env.template`), anywhere, the workspace included. Judged on
;; the effects the engine derives (docs/RULES.md, "Command effects"), not on the command text,
;; so every way of reading counts the same: a shell program's operand (`cat`, `less`, `grep`,
;; `cp .env /tmp/`), an option or a redirection (`< .env`), `source .env`, a command inside
;; `bash -c` or `$(…)`, an agent's Read, Grep or Glob (a `file` read). Both readings of a path
;; are judged: the name as written after normalization (`./`, `..`, `~`) and where it leads
;; after symlinks; names are compared in lower case (`.ENV`, `KEY.PEM`).
;; A name known only at run time that may be one of them (a glob such as `*.pe?` or `.e*`)
;; asks a human. Looking at a file's name or metadata (`ls -la .env`, `stat key.pem`) is not
;; reading it.

;; The lower-cased last component of a path.
(deffunction team-basename (?path)
  (bind ?rest (str-lower ?path))
  (bind ?i (str-index "/" ?rest))
  (while ?i do
    (bind ?rest (sub-string (+ ?i 1) (str-length ?rest) ?rest))
    (bind ?i (str-index "/" ?rest)))
  ?rest)

;; A file name the team keeps secret.
(deffunction team-secret-name-p (?name)
  (or (glob-match "*.pem" ?name)
      (eq ?name ".env")
      (and (glob-match ".env.*" ?name)
           (not (member$ ?name (create$ ".env.example" ".env.sample" ".env.template"))))))

;; Either reading of the path names a secret file.
(deffunction team-secret-path-p (?path)
  (or (team-secret-name-p (team-basename ?path))
      (team-secret-name-p (team-basename (path-resolve ?path)))))

;; Programs whose "read" of a path is its metadata or its name, never its contents (the same
;; list the shipped pack's credentials.clp leaves to its listing rule): `ls -la .env` asks
;; whether the file exists, `cat` reads it.
(deffunction team-metadata-program-p (?program)
  (member$ ?program (create$ "ls" "stat" "du" "tree" "test" "[" "realpath" "readlink" "dirname"
                             "basename")))

;; A name with wildcards that may expand to a secret file's name.
(deffunction team-secret-glob-p (?path)
  (bind ?glob (team-basename ?path))
  (foreach ?name (create$ ".env" ".env.local" "key.pem" "x.pem")
    (if (glob-match ?glob ?name) then (return TRUE)))
  FALSE)

(defrule team-secret-file-read
  (effect (proposal ?id) (kind read|exec) (object path) (target ?t) (program ?program))
  (test (not (team-metadata-program-p ?program)))
  (test (team-secret-path-p ?t))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule team-secret-file-read)
                    (reason (str-cat "reads " ?t ": private keys and .env files are not read")))))

(defrule team-secret-file-glob
  (effect (proposal ?id) (kind read|exec) (object path) (target ?t) (dynamic TRUE) (program ?program))
  (test (not (team-metadata-program-p ?program)))
  (test (not (team-secret-path-p ?t)))
  (test (team-secret-glob-p ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule team-secret-file-glob)
                    (reason (str-cat "reads " ?t ", which may name a private key or a .env file")))))
