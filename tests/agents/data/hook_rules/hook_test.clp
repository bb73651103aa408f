;;; Rules for the hook tests (tests/agents/hook_run_test.cpp), loaded with the shipped pack or
;;; alone: a marker command that needs approval, a rewrite, and an approved `ls`.

;; `echo needs-approval` needs a human.
(defrule hook-test-needs-approval
  (proposal (id ?id) (target shell))
  (param (proposal ?id) (key "payload.command") (value "echo needs-approval"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hook-test-needs-approval)
                    (reason "a human must look at this"))))

;; `echo old` runs as `echo new`.
(defrule hook-test-rewrite
  (proposal (id ?id) (target shell))
  (param (proposal ?id) (key "payload.command") (value "echo old"))
  =>
  (assert (rewrite (proposal ?id) (key "payload.command") (value "echo new")
                   (rule hook-test-rewrite) (reason "old is new")))
  (assert (decision (proposal ?id) (outcome approve) (rule hook-test-rewrite)
                    (reason "rewritten to echo new"))))

;; `ls` is fine.
(defrule hook-test-ls
  (proposal (id ?id) (target shell))
  (param (proposal ?id) (key "payload.command") (value "ls"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule hook-test-ls) (reason "listing is fine"))))

;; `rm -rf` of anything is not.
(defrule hook-test-rm-rf
  (proposal (id ?id) (target shell))
  (param (proposal ?id) (key "payload.command") (value ?c&:(str-index "rm -rf" ?c)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule hook-test-rm-rf)
                    (reason "no recursive forced delete"))))

;; `echo who` from the agent named coder-7 in session sess-1, through the hook: the context
;; the hook fills in reaches the rules.
(defrule hook-test-context
  (proposal (id ?id) (target shell) (agent "coder-7") (session "sess-1") (source hook))
  (param (proposal ?id) (key "payload.command") (value "echo who"))
  (param (proposal ?id) (key "context.tool") (value "Bash"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule hook-test-context)
                    (reason "coder-7 in sess-1 through the hook"))))
