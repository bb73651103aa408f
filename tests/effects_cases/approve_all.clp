; Effects-table test rule set: approves every proposal, so the cases beside it test only
; what rules/effects.toml and rules/paths.toml say a command does (expect_effects,
; not_effects), independently of the shipped pack. Run:
;   warden test rules/effects.toml rules/paths.toml tests/effects_cases
(defrule effects-cases-approve
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule effects-cases-approve)
                    (reason "effects table cases: the outcome is not under test"))))
