;;; secrets_outbound.clp — secrets leaving through messages, replies, HTTP requests,
;;; tool arguments and command lines.
;;;
;;; `looks-like-secret` knows the common token formats (AWS, GitHub, OpenAI, Anthropic,
;;; Slack, PEM private keys, JWTs) and long high-entropy strings. Messages and replies are
;;; repaired (the secret is redacted by a rewrite) and held for a human; HTTP bodies and
;;; URLs carrying a secret are rejected.

;; TRUE for a host a credential may be sent to in a header. A subset of the hosts of
;; egress-allowlisted-p in egress.clp, repeated so this file loads on its own (rule files
;; load in any order). (`neq` is TRUE when its first argument differs from every other one.)
(deffunction secrets-trusted-host-p (?h)
  (not (neq ?h "api.github.com" "github.com" "pypi.org" "files.pythonhosted.org"
            "registry.npmjs.org" "crates.io" "static.crates.io" "proxy.golang.org"
            "deb.debian.org")))

;; Redacts secrets from an outgoing chat/e-mail message and holds it for a human: the
;; message may still be worth sending, the secret never is. Every string in the payload is
;; scanned (`text`, `subject`, `to`, attachments, any field an actuator might send), and
;; each one holding a secret is rewritten.
(defrule secrets-message-redact
  (proposal (id ?id) (target message))
  (param (proposal ?id) (key ?k) (value ?t))
  (test (and (stringp ?t) (str-prefix "payload." ?k) (looks-like-secret ?t)))
  =>
  (assert (rewrite (proposal ?id) (key ?k) (value (redact-secrets ?t))
                   (rule secrets-message-redact) (reason (str-cat "secret redacted from " ?k))))
  (assert (decision (proposal ?id) (outcome approval-required) (rule secrets-message-redact)
                    (reason (str-cat "outgoing message contained a secret (" ?k
                                     "); the redacted message needs approval")))))

;; Redacts secrets from a reply to the user and holds it: replies are logged and shown in
;; shared channels, and a model echoing a key is a sign something went wrong. Every string
;; in the payload is scanned, not only `text`.
(defrule secrets-reply-redact
  (proposal (id ?id) (target reply))
  (param (proposal ?id) (key ?k) (value ?t))
  (test (and (stringp ?t) (str-prefix "payload." ?k) (looks-like-secret ?t)))
  =>
  (assert (rewrite (proposal ?id) (key ?k) (value (redact-secrets ?t))
                   (rule secrets-reply-redact) (reason (str-cat "secret redacted from " ?k))))
  (assert (decision (proposal ?id) (outcome approval-required) (rule secrets-reply-redact)
                    (reason (str-cat "reply contained a secret (" ?k "); the redacted reply needs approval")))))

;; Stops HTTP requests whose body (a string, or any string leaf of a JSON body) holds a
;; secret: the classic exfiltration channel.
(defrule secrets-http-body
  (proposal (id ?id) (target http))
  (param (proposal ?id) (key ?k) (value ?v))
  (test (and (str-prefix "payload.body" ?k) (stringp ?v) (looks-like-secret ?v)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule secrets-http-body)
                    (reason (str-cat "secret in HTTP body (" ?k ")")))))

;; Stops HTTP requests with a secret in the URL (`?token=ghp_…`, `https://key@host`):
;; URLs end up in proxy and server logs.
(defrule secrets-http-url
  (proposal (id ?id) (target http))
  (param (proposal ?id) (key "payload.url") (value ?v))
  (test (and (stringp ?v) (looks-like-secret ?v)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule secrets-http-url)
                    (reason "secret in the request URL"))))

;; Asks a human for a secret in a request header (`Authorization: Bearer ghp_…`) to an
;; allowlisted host: legitimate API use looks like this, but the credential is the agent's
;; to spend only with consent.
(defrule secrets-http-header
  (proposal (id ?id) (target http))
  (param (proposal ?id) (key ?k) (value ?v))
  (test (and (str-prefix "payload.headers." ?k) (stringp ?v) (looks-like-secret ?v)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule secrets-http-header)
                    (reason (str-cat "secret in HTTP header " ?k)))))

;; Stops a secret in a request header sent to a host that is not allowlisted: that is
;; handing the credential to a stranger.
(defrule secrets-http-header-untrusted-host
  (proposal (id ?id) (target http))
  (param (proposal ?id) (key ?k) (value ?v))
  (test (and (str-prefix "payload.headers." ?k) (stringp ?v) (looks-like-secret ?v)))
  (url (proposal ?id) (key "payload.url") (host ?h))
  (test (not (secrets-trusted-host-p ?h)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule secrets-http-header-untrusted-host)
                    (reason (str-cat "secret in HTTP header " ?k " sent to " ?h)))))

;; Stops command lines that carry a secret (`curl -H "Authorization: token ghp_…"`,
;; `export AWS_SECRET_ACCESS_KEY=…`, `echo sk-… | nc`): command lines are visible in the
;; process table, shell history and logs, and usually mean the secret is being moved.
(defrule secrets-shell-command
  (param (proposal ?id) (key "payload.command")
         (value ?c&:(stringp ?c)&:(>= (str-length ?c) 20)&:(looks-like-secret ?c)))
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule secrets-shell-command)
                    (reason "secret on the command line"))))

;; Asks a human when a tool call carries a secret in its arguments (`payload.args.*`).
(defrule secrets-tool-args
  (proposal (id ?id) (target tool))
  (param (proposal ?id) (key ?k) (value ?v))
  (test (and (str-prefix "payload.args" ?k) (stringp ?v) (looks-like-secret ?v)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule secrets-tool-args)
                    (reason (str-cat "secret in tool argument " ?k)))))

;; TRUE for token formats `looks-like-secret` does not know: PGP private key blocks, Stripe
;; live keys, GitLab, npm, PyPI, Hugging Face, DigitalOcean and SendGrid tokens, Google API
;; keys, and URLs with a password (`postgres://admin:pw@db/…`). Only the strings of
;; outgoing proposals (replies, messages, tool arguments, HTTP bodies) are tested.
(deffunction secrets-other-format-p (?v)
  (and (stringp ?v) (>= (str-length ?v) 16)
       (regex-match "-----BEGIN [A-Z ]*PRIVATE KEY|\\b(?:sk|rk)_live_[0-9A-Za-z]{16,}|\\bglpat-[0-9A-Za-z_-]{20,}|\\bnpm_[0-9A-Za-z]{36}\\b|\\bpypi-AgE[0-9A-Za-z_-]{40,}|\\bhf_[A-Za-z]{30,}\\b|\\bdop_v1_[0-9a-f]{64}\\b|\\bSG\\.[0-9A-Za-z_-]{20,}\\.[0-9A-Za-z_-]{40,}|\\bAIza[0-9A-Za-z_-]{35}\\b|[a-z][a-z0-9+.-]*://[^/\\s:@]+:[^/\\s@]{3,}@" ?v)))

;; Asks a human for a reply, message or tool call carrying a secret of a format
;; `looks-like-secret` does not know (see secrets-other-format-p).
(defrule secrets-outbound-other-format
  (proposal (id ?id) (target ?tg&reply|message|tool))
  (param (proposal ?id) (key ?k) (value ?v))
  ;; A test of its own, after the target: the key's prefix and the big regex are checked only
  ;; for these targets' strings (in the param pattern they would run on every string of
  ;; every proposal).
  (test (and (str-prefix "payload." ?k) (secrets-other-format-p ?v)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule secrets-outbound-other-format)
                    (reason (str-cat "outgoing " ?tg " holds a secret (" ?k ")")))))

;; Stops an HTTP request whose body holds a secret of such a format.
(defrule secrets-http-body-other-format
  (proposal (id ?id) (target http))
  (param (proposal ?id) (key ?k) (value ?v))
  (test (and (str-prefix "payload.body" ?k) (secrets-other-format-p ?v)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule secrets-http-body-other-format)
                    (reason (str-cat "secret in HTTP body (" ?k ")")))))

;; Asks a human before a request sends credentials by header (Authorization, Cookie, an API
;; key header), whatever their format, to a host they are not known to belong to: a
;; documentation host allowed for reading gets no session cookie.
(defrule secrets-http-credential-header-untrusted-host
  (proposal (id ?id) (target http))
  (param (proposal ?id) (key ?k))
  ;; The header names in a test after the target, not in the param pattern, where every
  ;; string of every proposal would be compared with each of them.
  ;; Header names arrive lowercased (HTTP reads them without case).
  (test (not (neq ?k "payload.headers.authorization" "payload.headers.cookie"
                  "payload.headers.proxy-authorization" "payload.headers.x-api-key")))
  (url (proposal ?id) (key "payload.url") (host ?h&:(not (secrets-trusted-host-p ?h))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule secrets-http-credential-header-untrusted-host)
                    (reason (str-cat "credential header " ?k " sent to " ?h)))))
