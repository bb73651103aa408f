;; Infrastructure changes only in office hours: Monday to Friday, 08:00 to 17:59 in Berlin
;; (daylight saving included). A single terraform, kubectl or helm command that changes
;; infrastructure is approved then; any infrastructure change outside those hours asks a human.
;; The shipped pack's own verdicts still apply beside it (reject > approval-required > approve).

(deffunction office-hours-p ()
  (and (not (member$ (local-weekday "Europe/Berlin") (create$ sat sun)))
       (>= (local-hour "Europe/Berlin") 8)
       (< (local-hour "Europe/Berlin") 18)))

;; The subcommands that change infrastructure.
(deffunction infra-change-p (?program ?subcommand)
  (or (and (eq ?program "terraform") (member$ ?subcommand (create$ "apply" "destroy" "import")))
      (and (eq ?program "kubectl")
           (member$ ?subcommand (create$ "apply" "create" "delete" "replace" "patch" "scale" "rollout")))
      (and (eq ?program "helm") (member$ ?subcommand (create$ "install" "upgrade" "uninstall" "rollback")))))

(defrule infra-change-in-office-hours
  ;; Only a line that is this one command: no wrapper, no redirection, nothing known only at
  ;; run time, no second command.
  (shell-command (proposal ?id) (index 0) (depth 0) (dynamic FALSE) (program ?p) (args ?sub $?) (wrappers))
  (not (shell-command (proposal ?id) (index ~0)))
  (not (shell-redirect (proposal ?id)))
  (test (infra-change-p ?p ?sub))
  (test (office-hours-p))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule infra-change-in-office-hours)
                    (reason (str-cat ?p " " ?sub " in office hours (Mon-Fri 08-18 Europe/Berlin)")))))

(defrule infra-change-outside-office-hours
  (shell-command (proposal ?id) (program ?p) (args ?sub $?))
  (test (infra-change-p ?p ?sub))
  (test (not (office-hours-p)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule infra-change-outside-office-hours)
                    (reason (str-cat ?p " " ?sub " outside office hours (Mon-Fri 08-18 Europe/Berlin)")))))
