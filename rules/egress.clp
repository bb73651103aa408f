;;; egress.clp — network egress: which hosts the agent may talk to, and how.
;;;
;;; Hosts are matched exactly against the `url` fact's host, never by substring, so
;;; `github.com.evil.io` is not github.com. The host is libcurl's reading (the HTTP client's);
;;; URLs that hide their host (userinfo, backslashes, percent-encoded or non-ASCII hosts,
;;; parsers disagreeing) are not valid at all. IP literals are judged by their class
;;; (`ip-class`), so 127.1, 0x7f.1, 2130706433 and [::ffff:7f00:1] are all loopback.

;; Hosts the agent may reach without a human: source forges and package registries.
(defglobal ?*egress-allowlist* =
  (create$ "api.github.com" "github.com" "pypi.org" "files.pythonhosted.org"
           "registry.npmjs.org" "crates.io" "static.crates.io" "proxy.golang.org"
           "deb.debian.org"))

;; Cloud instance-metadata endpoints: they hand out the machine's cloud credentials.
(defglobal ?*egress-metadata-hosts* =
  (create$ "169.254.169.254" "metadata.google.internal" "metadata" "100.100.100.200"
           "[fd00:ec2::254]" "169.254.170.2"))

;; TRUE for an HTTP method that only reads.
(deffunction egress-safe-method-p (?m)
  (and (lexemep ?m) (member$ (upcase ?m) (create$ "GET" "HEAD" "OPTIONS"))))

;; Address classes no request may reach: the machine itself, its networks, cloud metadata.
(defglobal ?*egress-internal-classes* =
  (create$ "loopback" "unspecified" "private" "link-local" "metadata" "multicast" "reserved"))

;; TRUE for a word that is a URL whose host is not on the allowlist.
(deffunction egress-unlisted-url-p (?a)
  (bind ?h (url-host ?a))
  (and (neq ?h "") (not (member$ ?h ?*egress-allowlist*))))

;; TRUE for a word that is written as a URL (`scheme://…`, `scheme:/\…`).
(deffunction egress-url-word-p (?a)
  (regex-match "^[A-Za-z][A-Za-z0-9+.-]*:[/\\\\]" ?a))

;; The address class of a word curl or wget would fetch: a URL, or a scheme-less
;; `host/path` or `host:port` (they assume http:// then). "" for names and other words.
(deffunction egress-word-ip-class (?a)
  (if (egress-url-word-p ?a) then (return (url-ip-class ?a)))
  (if (regex-match "^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9._-]+)(:[0-9]+)?(/|$)" ?a)
      then (if (or (str-index "/" ?a) (str-index ":" ?a)) then (return (url-ip-class (str-cat "http://" ?a)))))
  "")

;; TRUE for a word that is a URL pointing at a metadata endpoint (by name or address).
(deffunction egress-metadata-url-p (?a)
  (bind ?h (url-host ?a))
  (or (and (neq ?h "") (member$ ?h ?*egress-metadata-hosts*))
      (eq (egress-word-ip-class ?a) "metadata")))

;; TRUE for a word that reaches an internal address other than a metadata endpoint.
(deffunction egress-internal-url-p (?a)
  (bind ?c (egress-word-ip-class ?a))
  (and (neq ?c "metadata") (member$ ?c ?*egress-internal-classes*)))

;; Stops HTTP requests whose URL is refused (does not parse, hides its host, or parsers
;; disagree on it): what the actuator would contact is unknown or disguised.
(defrule egress-http-invalid-url
  (url (proposal ?id) (key "payload.url") (valid FALSE) (raw ?u) (error ?e))
  (proposal (id ?id) (target http))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-http-invalid-url)
                    (reason (str-cat "invalid URL (" ?e "): " ?u)))))

;; Stops HTTP requests with a scheme other than http/https (`file:///etc/passwd`,
;; `gopher://`, `ftp://`, `data:`): the HTTP actuator must not become a file reader or a
;; protocol smuggler.
(defrule egress-http-scheme
  (url (proposal ?id) (key "payload.url") (valid TRUE) (scheme ?s&~"http"&~"https"))
  (proposal (id ?id) (target http))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-http-scheme)
                    (reason (str-cat "URL scheme not allowed: " ?s)))))

;; Stops requests to cloud metadata endpoints (169.254.169.254 in any spelling, also
;; [::ffff:a9fe:a9fe], metadata.google.internal …): SSRF to the machine's own cloud credentials.
(defrule egress-http-metadata
  (url (proposal ?id) (key "payload.url") (valid TRUE) (host ?h) (ip-class ?c))
  (test (or (eq ?c "metadata") (member$ ?h ?*egress-metadata-hosts*)))
  (proposal (id ?id) (target http))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-http-metadata)
                    (reason (str-cat "cloud metadata endpoint: " ?h)))))

;; Stops requests to the machine itself and its networks (loopback, 0.0.0.0, private,
;; link-local, multicast, reserved addresses, localhost): SSRF to internal services.
(defrule egress-http-internal-address
  (url (proposal ?id) (key "payload.url") (valid TRUE) (host ?h)
       (ip-class ?c&~"metadata"&:(member$ ?c ?*egress-internal-classes*)))
  (proposal (id ?id) (target http))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-http-internal-address)
                    (reason (str-cat "internal address (" ?c "): " ?h)))))

;; Asks a human before talking to a host that is not on the allowlist.
(defrule egress-http-host-not-allowlisted
  (url (proposal ?id) (key "payload.url") (valid TRUE) (scheme "http"|"https")
       (host ?h&:(not (member$ ?h ?*egress-allowlist*))))
  (proposal (id ?id) (target http))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-http-host-not-allowlisted)
                    (reason (str-cat "host not on the egress allowlist: " ?h)))))

;; Asks a human for plain http to an allowlisted host: anyone on the path can read and
;; change the traffic.
(defrule egress-http-plaintext
  (url (proposal ?id) (key "payload.url") (valid TRUE) (scheme "http")
       (host ?h&:(member$ ?h ?*egress-allowlist*)))
  (proposal (id ?id) (target http))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-http-plaintext)
                    (reason (str-cat "unencrypted http to " ?h)))))

;; Approves reading (GET/HEAD/OPTIONS, or no method = GET) over https from an allowlisted host.
(defrule egress-http-read-allowlisted
  (url (proposal ?id) (key "payload.url") (valid TRUE) (scheme "https")
       (host ?h&:(member$ ?h ?*egress-allowlist*)))
  (proposal (id ?id) (target http))
  (or (not (param (proposal ?id) (key "payload.method")))
      (param (proposal ?id) (key "payload.method") (value ?m&:(egress-safe-method-p ?m))))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule egress-http-read-allowlisted)
                    (reason (str-cat "read from allowlisted host " ?h)))))

;; Asks a human for POST/PUT/PATCH/DELETE even to an allowlisted host: it changes state
;; (opens issues, publishes packages, deletes repositories) and can carry data out.
(defrule egress-http-write-allowlisted
  (url (proposal ?id) (key "payload.url") (valid TRUE) (host ?h&:(member$ ?h ?*egress-allowlist*)))
  (proposal (id ?id) (target http))
  (param (proposal ?id) (key "payload.method") (value ?m&:(not (egress-safe-method-p ?m))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-http-write-allowlisted)
                    (reason (str-cat "state-changing request to " ?h)))))

;; Stops `curl http://169.254.169.254/latest/meta-data/iam/…` from the shell as well, in any
;; spelling (`curl 0xa9fea9fe/…`, `wget http://[::ffff:a9fe:a9fe]/…`).
(defrule egress-shell-metadata
  (shell-command (proposal ?id) (program "curl"|"wget"|"fetch"|"http"|"https"|"xh"|"aria2c")
                 (args $? ?a&:(egress-metadata-url-p ?a) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-shell-metadata)
                    (reason (str-cat "cloud metadata endpoint: " ?a)))))

;; Stops curl/wget to the machine itself or its networks (`curl http://127.1:8080/admin`,
;; `curl localhost:2375/containers/json`, `wget http://10.0.0.5/`): SSRF to internal services.
(defrule egress-shell-internal-address
  (shell-command (proposal ?id) (program "curl"|"wget"|"fetch"|"http"|"https"|"xh"|"aria2c")
                 (args $? ?a&:(egress-internal-url-p ?a) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-shell-internal-address)
                    (reason (str-cat "internal address: " ?a)))))

;; Stops curl/wget/git on a word written as a URL that is refused (`curl
;; "https://github.com\@evil.example/"`): the host the rules see would not be the one
;; contacted.
(defrule egress-shell-invalid-url
  (shell-command (proposal ?id) (program "curl"|"wget"|"fetch"|"http"|"https"|"xh"|"aria2c"|"git")
                 (args $? ?a&:(egress-url-word-p ?a)&:(neq (url-error ?a) "") $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-shell-invalid-url)
                    (reason (str-cat "invalid URL (" (url-error ?a) "): " ?a)))))

;; Asks a human when curl/wget (or httpie/xh/aria2c) fetches a URL whose host is not
;; allowlisted.
(defrule egress-shell-url-not-allowlisted
  (shell-command (proposal ?id) (program "curl"|"wget"|"fetch"|"http"|"https"|"xh"|"aria2c")
                 (args $? ?a&:(str-index ":" ?a)&:(egress-unlisted-url-p ?a) $?))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-shell-url-not-allowlisted)
                    (reason (str-cat "download from a host not on the allowlist: " (url-host ?a))))))

;; Asks a human for raw network clients (ssh, sftp, ftp, telnet, nc, socat, mosh): they
;; reach any host and carry anything.
(defrule egress-shell-network-client
  (shell-command (proposal ?id) (program ?p&"ssh"|"sftp"|"ftp"|"telnet"|"nc"|"ncat"|"netcat"|"socat"|"mosh"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-shell-network-client)
                    (reason (str-cat ?p " opens a network connection")))))

;; Asks a human for scp/rsync to or from a remote host (`host:path`, `user@host:path`,
;; `rsync://`); local copies are not egress.
(defrule egress-shell-remote-copy
  (shell-command (proposal ?id) (program "scp"|"rsync")
                 (args $? ?a&:(regex-match "^([^/@:]+@)?[A-Za-z0-9._-]+:|^\\[[0-9a-fA-F:]+\\]:|^rsync://" ?a) $?))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-shell-remote-copy)
                    (reason (str-cat "copy to or from a remote host: " ?a)))))

;; Asks a human for `git push`: publishes code (and anything committed with it).
(defrule egress-shell-git-push
  (shell-command (proposal ?id) (program "git") (args $? "push" $?))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-shell-git-push)
                    (reason "git push publishes the repository"))))

;; Asks a human for `git clone|fetch|pull|ls-remote|submodule add` from a URL whose host is
;; not allowlisted.
(defrule egress-shell-git-remote-not-allowlisted
  (shell-command (proposal ?id) (program "git")
                 (args "clone"|"fetch"|"pull"|"ls-remote"|"submodule"|"remote" $? ?a&:(str-index ":" ?a)&:(egress-unlisted-url-p ?a) $?))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-shell-git-remote-not-allowlisted)
                    (reason (str-cat "git talks to a host not on the allowlist: " (url-host ?a))))))
