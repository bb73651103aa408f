;;; The team's git rules, loaded beside the shipped pack with overlay.toml: `git push` of a
;;; named branch is approved (overlay.toml); a forced push, a push to main or master, a push
;;; that deletes or mirrors refs is rejected; a push that names no branch asks a human.

;; A forced push rewrites the remote's history: the effects table derives a `delete` effect
;; for --force, --force-with-lease, --mirror, --delete and a +refspec.
(defrule team-git-push-force
  (effect (proposal ?id) (program "git") (subcommand "push") (kind delete))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule team-git-push-force)
                    (reason "the team does not force-push or delete remote refs"))))

;; The same, read from the words: a force or ref-deleting option, or a +refspec or :refspec.
(defrule team-git-push-force-flag
  (shell-command (proposal ?id) (program "git") (args $? "push" $?)
                 (flags $? ?f&:(regex-match "^(-f|--force.*|--mirror|--delete|-d|--prune|--all)$" ?f) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule team-git-push-force-flag)
                    (reason (str-cat "git push " ?f ": the team does not force-push or delete remote refs")))))

(defrule team-git-push-force-refspec
  (shell-command (proposal ?id) (program "git") (args $? "push" $? ?r&:(regex-match "^[+:]" ?r) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule team-git-push-force-refspec)
                    (reason (str-cat "git push " ?r ": the team does not force-push or delete remote refs")))))

;; main and master are changed through reviews, never by an agent's push.
(defrule team-git-push-main
  (shell-command (proposal ?id) (program "git") (args $? "push" $? ?ref $?))
  (test (regex-match "^(.*:)?(refs/heads/)?(main|master)$" ?ref))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule team-git-push-main)
                    (reason "pushes to main go through a review"))))

;; `git push` or `git push origin` pushes whatever the branch's upstream is: maybe main.
(defrule team-git-push-unnamed-branch
  (shell-command (proposal ?id) (program "git") (args $? "push" $?rest&:(< (length$ ?rest) 2)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule team-git-push-unnamed-branch)
                    (reason "name the branch to push (git push origin BRANCH)"))))

;; The pack's egress-publish and egress-network-unnamed-host (disabled in overlay.toml),
;; for everything but git push.
(defrule team-publish
  (effect (proposal ?id) (kind network) (program ?p)
          (subcommand ?s&"publish"|"unpublish"|"yank"|"deprecate"|"push"|"upload"|"release"|"login"|"adduser"|"owner"|"dist-tag"))
  (test (not (and (eq ?p "git") (eq ?s "push"))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule team-publish)
                    (reason (str-cat ?p " " ?s " publishes or changes a registry")))))

(defrule team-network-unnamed-host
  (effect (proposal ?id) (index ~-1) (kind network) (target "") (program ?p) (subcommand ?s) (via ?v))
  (test (not (or (and (eq ?p "git") (member$ ?s (create$ "push" "fetch" "pull" "clone" "ls-remote" "submodule update" "remote-update")))
                 (and (eq ?p "docker") (eq ?s "compose build"))
                 (and (member$ ?p (create$ "mvn" "mvnw" "gradle" "gradlew")) (eq ?v "program")))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule team-network-unnamed-host)
                    (reason (str-cat ?p " " ?s " reaches the network (host not named in the command)")))))
