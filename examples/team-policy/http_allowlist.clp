;; HTTP requests only to the team's hosts (hosts.data.toml). Judged on the `url` fact the
;; engine reads from payload.url (docs/RULES.md, "URLs"): the host lower-cased, without port,
;; user information or trailing dot, after refusing every URL two parsers could read two ways
;; (`https://api.github.com@evil.example/`, a backslash, a percent-encoded host: not valid).
;; - an https GET or HEAD to a listed host, on port 443, is approved;
;; - any other method to a listed host (POST, PUT, PATCH, DELETE …) asks a human;
;; - a host not on the list, a URL that is not valid, another scheme (http://, ftp://) or
;;   another port is refused.
;; The method is payload.method, upper-cased (absent: GET). Requests a shell command makes
;; (`curl`, `wget`) are `network` effects of that command, left to the shipped pack.

;; GET and HEAD read; every other method changes something on the server.
(deffunction team-http-read-method-p (?method)
  (member$ (upcase ?method) (create$ "GET" "HEAD")))

(defrule team-http-get-listed
  (proposal (id ?id) (target http))
  (url (proposal ?id) (key "payload.url") (valid TRUE) (scheme "https") (host ?h) (port 443))
  (test (data-member "http-hosts" ?h))
  (or (not (param (proposal ?id) (key "payload.method")))
      (param (proposal ?id) (key "payload.method") (value ?m&:(team-http-read-method-p ?m))))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule team-http-get-listed)
                    (reason (str-cat ?h " is on the team's list")))))

(defrule team-http-write-listed
  (proposal (id ?id) (target http))
  (url (proposal ?id) (key "payload.url") (valid TRUE) (scheme "https") (host ?h) (port 443))
  (test (data-member "http-hosts" ?h))
  (param (proposal ?id) (key "payload.method") (value ?m&:(not (team-http-read-method-p ?m))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule team-http-write-listed)
                    (reason (str-cat (upcase ?m) " to " ?h " changes something there: a person decides")))))

(defrule team-http-unlisted-host
  (proposal (id ?id) (target http))
  (url (proposal ?id) (key "payload.url") (valid TRUE) (host ?h))
  (test (not (data-member "http-hosts" ?h)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule team-http-unlisted-host)
                    (reason (str-cat ?h " is not on the team's list of hosts")))))

(defrule team-http-listed-host-not-https-443
  (proposal (id ?id) (target http))
  (url (proposal ?id) (key "payload.url") (valid TRUE) (scheme ?s) (host ?h) (port ?p))
  (test (data-member "http-hosts" ?h))
  (test (or (neq ?s "https") (<> ?p 443)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule team-http-listed-host-not-https-443)
                    (reason (str-cat ?h ": only https on port 443, not " ?s " on port " ?p)))))

(defrule team-http-invalid-url
  (proposal (id ?id) (target http))
  (url (proposal ?id) (key "payload.url") (valid FALSE) (error ?e))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule team-http-invalid-url)
                    (reason (str-cat "the URL is not valid: " ?e)))))
