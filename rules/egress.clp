;;; egress.clp — network egress: which hosts the agent may talk to, and how.
;;;
;;; Hosts are matched exactly against the `url` fact's host, never by substring, so
;;; `github.com.evil.io` is not github.com. The host is libcurl's reading (the HTTP client's);
;;; URLs that hide their host (userinfo, backslashes, percent-encoded or non-ASCII hosts,
;;; parsers disagreeing) are not valid at all. IP literals are judged by their class
;;; (`ip-class`), so 127.1, 0x7f.1, 2130706433 and [::ffff:7f00:1] are all loopback.

;; TRUE for a host the agent may reach without a human: source forges, package registries
;; and documentation sites. Exact host names. everyday.clp uses this list too. (A function,
;; not a defglobal list: globals are evaluated again before every decision. `neq` is TRUE
;; when its first argument differs from every other one.)
(deffunction egress-allowlisted-p (?h)
  (not (neq ?h
            "api.github.com" "github.com" "codeload.github.com" "objects.githubusercontent.com"
            "pypi.org" "files.pythonhosted.org" "registry.npmjs.org" "registry.yarnpkg.com"
            "crates.io" "static.crates.io" "index.crates.io" "proxy.golang.org" "sum.golang.org"
            "deb.debian.org"
            "docs.python.org" "developer.mozilla.org" "docs.rs" "doc.rust-lang.org" "pkg.go.dev"
            "go.dev" "en.cppreference.com" "nodejs.org" "docs.npmjs.com" "cmake.org"
            "api.nuget.org" "repo.maven.apache.org" "repo1.maven.org" "plugins.gradle.org"
            "services.gradle.org" "rubygems.org" "index.rubygems.org" "static.rust-lang.org"
            "raw.githubusercontent.com" "gist.githubusercontent.com" "docs.github.com"
            "docs.docker.com" "kubernetes.io" "learn.microsoft.com" "stackoverflow.com"
            "en.wikipedia.org" "www.rust-lang.org" "typescriptlang.org" "www.typescriptlang.org"
            "react.dev" "docs.djangoproject.com" "flask.palletsprojects.com" "numpy.org"
            "pandas.pydata.org" "docs.pytest.org")))

;; TRUE for a cloud instance-metadata endpoint: they hand out the machine's cloud credentials.
(deffunction egress-metadata-host-p (?h)
  (not (neq ?h "169.254.169.254" "metadata.google.internal" "metadata" "100.100.100.200"
            "[fd00:ec2::254]" "169.254.170.2")))

;; TRUE for an HTTP method that only reads.
(deffunction egress-safe-method-p (?m)
  (and (lexemep ?m) (not (neq (upcase ?m) "GET" "HEAD" "OPTIONS"))))

;; TRUE for an address class no request may reach: the machine itself, its networks, cloud
;; metadata.
(deffunction egress-internal-class-p (?c)
  (not (neq ?c "loopback" "unspecified" "private" "link-local" "metadata" "multicast" "reserved")))

;; TRUE for a curl/wget option that sends a body or a file, or sets a method that does.
(deffunction egress-upload-word-p (?a)
  (regex-match "^(-[a-zA-Z]*[dFT]|--(data|data-ascii|data-binary|data-raw|data-urlencode|form|form-string|upload-file|json|post-data|post-file|body-data|body-file)(=|$)|-X(POST|PUT|PATCH|DELETE)?$|--request(=|$)|--method(=|$))" ?a))

;; TRUE for a word that is written as a URL (`scheme://…`, `scheme:/\…`).
(deffunction egress-url-word-p (?a)
  (regex-match "^[A-Za-z][A-Za-z0-9+.-]*:[/\\\\]" ?a))

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
  (test (or (eq ?c "metadata") (egress-metadata-host-p ?h)))
  (proposal (id ?id) (target http))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-http-metadata)
                    (reason (str-cat "cloud metadata endpoint: " ?h)))))

;; Stops requests to the machine itself and its networks (loopback, 0.0.0.0, private,
;; link-local, multicast, reserved addresses, localhost): SSRF to internal services.
(defrule egress-http-internal-address
  (url (proposal ?id) (key "payload.url") (valid TRUE) (host ?h)
       (ip-class ?c&~"metadata"&:(egress-internal-class-p ?c)))
  (proposal (id ?id) (target http))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-http-internal-address)
                    (reason (str-cat "internal address (" ?c "): " ?h)))))

;; Stops a request that sets a header the HTTP client owns: `Host` would send it to another
;; site than the URL names (a shared front end routes by it), and the length and framing
;; headers would make the request read differently on its way. The HTTP actuator refuses them
;; too; the rules say so before anything is approved.
(defrule egress-http-client-header
  (proposal (id ?id) (target http))
  (param (proposal ?id) (key ?k&"payload.headers.host"|"payload.headers.content-length"
                               |"payload.headers.transfer-encoding"|"payload.headers.connection"
                               |"payload.headers.expect"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-http-client-header)
                    (reason (str-cat "the header " (sub-string 17 (str-length ?k) ?k)
                                     " is set by the HTTP client, not the request")))))

;; TRUE for a request header whose meaning is known and carries neither a credential nor
;; a route nor a change of method: content negotiation, caching, ranges, the client's name.
;; (Lowercase: an `http` proposal's header names arrive lowercased.)
(deffunction egress-harmless-header-p (?n)
  (not (neq ?n "accept" "accept-charset" "accept-encoding" "accept-language" "cache-control"
            "content-type" "content-language" "content-encoding" "if-match" "if-none-match"
            "if-modified-since" "if-unmodified-since" "if-range" "range" "pragma" "user-agent"
            "dnt" "upgrade-insecure-requests" "x-requested-with" "x-github-api-version")))

;; Asks a human for a request header the rules do not know (a closed list): any other may
;; carry a credential (`X-Auth-Token`, `Private-Token`), route the request (`X-Forwarded-Host`)
;; or change what it does (`X-HTTP-Method-Override: DELETE` on an approved read).
(defrule egress-http-unlisted-header
  (proposal (id ?id) (target http))
  (param (proposal ?id) (key ?k&:(str-prefix "payload.headers." ?k)))
  (test (not (egress-harmless-header-p (sub-string 17 (str-length ?k) ?k))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-http-unlisted-header)
                    (reason (str-cat "sends the header " (sub-string 17 (str-length ?k) ?k)
                                     ", which the rules do not know as harmless")))))

;; TRUE for a word of a command line that is a header line (`Host: x`, `-HHost: x`,
;; `--header=Cookie: a`, `user:pw`) and not a URL (`https://…`).
(deffunction egress-header-word-p (?w)
  (and (stringp ?w) (str-index ":" ?w)
       (regex-match "^(?:-[A-Za-z0-9]*H|--[a-z-]+=)?\\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+\\s*:(?:$|[^/]|/[^/])" ?w)))

;; TRUE for a header line naming a header egress-harmless-header-p knows.
(deffunction egress-harmless-header-word-p (?w)
  (regex-match "(?i)^(?:-[A-Za-z0-9]*H|--[a-z-]+=)?\\s*(?:accept|accept-charset|accept-encoding|accept-language|cache-control|content-type|content-language|content-encoding|if-match|if-none-match|if-modified-since|if-unmodified-since|if-range|range|pragma|user-agent|dnt|upgrade-insecure-requests|x-requested-with|x-github-api-version)\\s*:" ?w))

;; Stops an HTTP client told to send a Host or framing header (`curl -H 'Host: evil.example'
;; https://pypi.org/`), or given a word holding a line break (`-A $'x\r\nHost: evil'`, any
;; option the client writes into the request): it reaches another site than the URL the
;; rules judged.
(defrule egress-shell-client-header
  (shell-command (proposal ?id) (program ?p&"curl"|"wget"|"wget2"|"xh"|"http"|"https"|"aria2c"|"gh")
                 (argv $? ?w&:(regex-match "(?i)^(?:-[A-Za-z0-9]*H|--[a-z-]+=)?\\s*(?:host|content-length|transfer-encoding|connection|expect)\\s*:|[\\r\\n]" ?w) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-shell-client-header)
                    (reason (str-cat ?p " sends the header line " ?w
                                     ", which names another site or frames the request")))))

;; Asks a human when an HTTP client is given a header line the rules do not know as harmless
;; (`curl -H 'X-Auth-Token: …'`, `-H 'Cookie: …'`, a proxy or `--resolve HOST:PORT:ADDR`, a
;; `user:password`), reads its headers from a file (`curl -H @h.txt`), or is given
;; credentials (`curl -u`, `-b`, `--oauth2-bearer`, `wget --password`): as the `http`
;; target's headers are judged.
(defrule egress-shell-request-credentials
  (or (shell-command (proposal ?id) (program ?p&"curl"|"wget"|"wget2"|"xh"|"http"|"https"|"aria2c"|"gh")
                     (argv $? ?w&:(egress-header-word-p ?w)&:(not (egress-harmless-header-word-p ?w)) $?))
      ;; Header lines from a file or known only at run time (`-H @h.txt`, `-H@h.txt`,
      ;; `-H "$(cat h.txt)"`, `--header="$H"`).
      (shell-command (proposal ?id) (program ?p&"curl"|"wget"|"wget2"|"xh"|"http"|"https"|"aria2c"|"gh")
                     (argv $? ?o&:(regex-match "^(?:-[A-Za-z0-9]*[HAeU]|--(?:he(?:a(?:d(?:e(?:r)?)?)?)?|user-agent|referer|range|request-target|proxy-header))$" ?o)
                           ?w&:(regex-match "^@|[$`]" ?w) $?))
      (shell-command (proposal ?id) (program ?p&"curl"|"wget"|"wget2"|"xh"|"http"|"https"|"aria2c"|"gh")
                     (argv $? ?w&:(regex-match "^(?:-[A-Za-z0-9]*[HAeU]|--(?:he(?:a(?:d(?:e(?:r)?)?)?)?|user-agent|referer|range|request-target|proxy-header)=)(?:@|.*[$`])" ?w) $?))
      (shell-command (proposal ?id) (program ?p&"curl")
                     (argv $? ?w&:(regex-match "^(?:-[A-Za-z0-9]*[ubEn]|--(?:user|cookie|oauth2-bearer|cert|netrc|netrc-file|netrc-optional|aws-sigv4|proxy-user|delegation|proxy|socks5|socks5-hostname|preproxy|resolve|connect-to|unix-socket|abstract-unix-socket|alt-svc|request-target|haproxy-protocol|haproxy-clientip)(?:=.*)?)(?:$|[^A-Za-z0-9-].*)" ?w) $?))
      ;; wget reads any unambiguous beginning of a long option (`--load-c`, `--private-k`).
      (shell-command (proposal ?id) (program ?p&"wget"|"wget2")
                     (argv $? ?w&:(regex-match "^--(?:u(?:s(?:e(?:r)?)?)?|pas(?:s(?:w(?:o(?:r(?:d)?)?)?)?)?|http-u(?:s(?:e(?:r)?)?)?|http-p(?:a(?:s(?:s(?:w(?:o(?:r(?:d)?)?)?)?)?)?)?|proxy-u(?:s(?:e(?:r)?)?)?|proxy-pas(?:s(?:w(?:o(?:r(?:d)?)?)?)?)?|lo(?:a(?:d(?:-(?:c(?:o(?:o(?:k(?:i(?:e(?:s)?)?)?)?)?)?)?)?)?)?|as(?:k(?:-(?:p(?:a(?:s(?:s(?:w(?:o(?:r(?:d)?)?)?)?)?)?)?)?)?)?|use-as(?:k(?:p(?:a(?:s(?:s)?)?)?)?)?|certificate|cert|pri(?:v(?:a(?:t(?:e(?:-(?:k(?:e(?:y)?)?)?)?)?)?)?)?|ex(?:e(?:c(?:u(?:t(?:e)?)?)?)?)?|e)(?:=.*)?$|^-e" ?w) $?))
      ;; httpie and xh: credentials and session files.
      (shell-command (proposal ?id) (program ?p&"xh"|"http"|"https")
                     (argv $? ?w&:(regex-match "^(?:-[A-Za-z0-9]*[aA]|--(?:auth|auth-type|session|session-read-only|bearer|cert|cert-key)(?:=.*)?)$" ?w) $?)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-shell-request-credentials)
                    (reason (str-cat ?p " is given a header, route or credentials the rules do not know as harmless: " ?w)))))

;; Asks a human before talking to a host that is not on the allowlist.
(defrule egress-http-host-not-allowlisted
  (url (proposal ?id) (key "payload.url") (valid TRUE) (scheme "http"|"https")
       (host ?h&:(not (egress-allowlisted-p ?h))))
  (proposal (id ?id) (target http))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-http-host-not-allowlisted)
                    (reason (str-cat "host not on the egress allowlist: " ?h)))))

;; Asks a human for plain http to an allowlisted host: anyone on the path can read and
;; change the traffic.
(defrule egress-http-plaintext
  (url (proposal ?id) (key "payload.url") (valid TRUE) (host ?h&:(egress-allowlisted-p ?h)) (scheme "http"))
  (proposal (id ?id) (target http))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-http-plaintext)
                    (reason (str-cat "unencrypted http to " ?h)))))

;; Approves reading (GET/HEAD/OPTIONS, or no method = GET) over https from an allowlisted host.
(defrule egress-http-read-allowlisted
  (url (proposal ?id) (key "payload.url") (valid TRUE) (host ?h&:(egress-allowlisted-p ?h)) (scheme "https"))
  (proposal (id ?id) (target http))
  (or (not (param (proposal ?id) (key "payload.method")))
      (param (proposal ?id) (key "payload.method") (value ?m&:(egress-safe-method-p ?m))))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule egress-http-read-allowlisted)
                    (reason (str-cat "read from allowlisted host " ?h)))))

;; Asks a human for POST/PUT/PATCH/DELETE even to an allowlisted host: it changes state
;; (opens issues, publishes packages, deletes repositories) and can carry data out.
(defrule egress-http-write-allowlisted
  (url (proposal ?id) (key "payload.url") (valid TRUE) (host ?h&:(egress-allowlisted-p ?h)))
  (proposal (id ?id) (target http))
  (param (proposal ?id) (key "payload.method") (value ?m&:(not (egress-safe-method-p ?m))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-http-write-allowlisted)
                    (reason (str-cat "state-changing request to " ?h)))))

;; Stops curl/wget/git on a word written as a URL that is refused (`curl
;; "https://github.com\@evil.example/"`): the host the rules see would not be the one
;; contacted.
(defrule egress-shell-invalid-url
  (or (shell-command (proposal ?id) (program "curl") (args $? ?a&:(str-index ":" ?a)&:(egress-url-word-p ?a)&:(neq (url-error ?a) "") $?))
      (shell-command (proposal ?id) (program "wget") (args $? ?a&:(str-index ":" ?a)&:(egress-url-word-p ?a)&:(neq (url-error ?a) "") $?))
      (shell-command (proposal ?id) (program "fetch") (args $? ?a&:(str-index ":" ?a)&:(egress-url-word-p ?a)&:(neq (url-error ?a) "") $?))
      (shell-command (proposal ?id) (program "http") (args $? ?a&:(str-index ":" ?a)&:(egress-url-word-p ?a)&:(neq (url-error ?a) "") $?))
      (shell-command (proposal ?id) (program "https") (args $? ?a&:(str-index ":" ?a)&:(egress-url-word-p ?a)&:(neq (url-error ?a) "") $?))
      (shell-command (proposal ?id) (program "xh") (args $? ?a&:(str-index ":" ?a)&:(egress-url-word-p ?a)&:(neq (url-error ?a) "") $?))
      (shell-command (proposal ?id) (program "aria2c") (args $? ?a&:(str-index ":" ?a)&:(egress-url-word-p ?a)&:(neq (url-error ?a) "") $?))
      (shell-command (proposal ?id) (program "git") (args $? ?a&:(str-index ":" ?a)&:(egress-url-word-p ?a)&:(neq (url-error ?a) "") $?)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-shell-invalid-url)
                    (reason (str-cat "invalid URL (" (url-error ?a) "): " ?a)))))

;; Asks a human for `git push`: publishes code (and anything committed with it).
(defrule egress-shell-git-push
  (effect (proposal ?id) (kind network) (program "git") (subcommand "push"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-shell-git-push)
                    (reason "git push publishes the repository"))))

;; The address class of a network effect's host (`169.254.169.254`, `[::1]`, `localhost`,
;; `0x7f.1` as the effects table normalized it): what `url-ip-class` says of http://HOST/.
(deffunction egress-host-class (?h)
  (if (and (str-index ":" ?h) (not (str-prefix "[" ?h)))
      then (url-ip-class (str-cat "http://[" ?h "]/"))
      else (url-ip-class (str-cat "http://" ?h "/"))))

;; TRUE for a host whose address class is internal (private, link-local, 0.0.0.0 …) but
;; neither metadata nor loopback (judged by their own rules).
(deffunction egress-internal-host-p (?h)
  (bind ?c (egress-host-class ?h))
  (and (neq ?c "metadata") (neq ?c "loopback") (egress-internal-class-p ?c)))

;; Stops any command reaching a cloud metadata endpoint (`curl 169.254.169.254/…`,
;; `wget http://[::ffff:a9fe:a9fe]/`, `curl http://metadata.google.internal/…`): the
;; machine's own cloud credentials.
(defrule egress-network-metadata
  (effect (proposal ?id) (index ~-1) (kind network) (target ?h&~""))
  (test (or (egress-metadata-host-p ?h) (eq (egress-host-class ?h) "metadata")))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-network-metadata)
                    (reason (str-cat "cloud metadata endpoint: " ?h)))))

;; Stops any command reaching the machine's networks (`curl http://10.0.0.5/`,
;; `git clone http://192.168.1.9/x`, `curl 0.0.0.0:8000`, `nc 192.168.1.1 22`): SSRF to
;; internal services. (ssh, scp and rsync to an internal host, usually a deploy, ask a human
;; through egress-network-not-allowlisted instead.) Names that only resolve to such addresses (127.0.0.1.nip.io) are
;; caught as hosts not on the allowlist.
(defrule egress-network-internal-address
  (effect (proposal ?id) (index ~-1) (kind network) (target ?h&~""&:(not (egress-allowlisted-p ?h)))
          (program ~"ssh"&~"scp"&~"sftp"&~"rsync"&~"mosh"&~"ssh-copy-id"))
  (test (egress-internal-host-p ?h))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule egress-network-internal-address)
                    (reason (str-cat "internal address: " ?h)))))

;; Asks a human before a command talks to the machine itself (`curl localhost:3000/health`,
;; `curl http://127.1:2375/containers/json`, `git clone http://127.0.0.1:3000/x`): testing the
;; server being built is everyday, but local admin APIs (Docker, databases, cloud agents)
;; answer there too. (The HTTP actuator rejects loopback outright.)
(defrule egress-network-loopback
  (effect (proposal ?id) (index ~-1) (kind network) (target ?h&~""&:(not (egress-allowlisted-p ?h))))
  (test (eq (egress-host-class ?h) "loopback"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-network-loopback)
                    (reason (str-cat "talks to this machine: " ?h)))))

;; Asks a human before any command talks to a host that is not on the allowlist: `curl`,
;; `wget`, `git clone`, `pip install --index-url`, `npm --registry`, `ssh`, `scp`/`rsync`
;; to a remote, `nc`, `dig x.evil.example`, `docker run IMAGE` (Docker Hub is fine only for
;; building: `docker build`, `docker compose build`).
(defrule egress-network-not-allowlisted
  (effect (proposal ?id) (index ~-1) (kind network) (target ?h&~""&:(not (egress-allowlisted-p ?h))) (program ?p)
          (subcommand ?s))
  (test (not (and (eq ?h "registry-1.docker.io") (member$ ?s (create$ "build" "compose build" "buildx build")))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-network-not-allowlisted)
                    (reason (str-cat ?p " talks to a host not on the egress allowlist: " ?h)))))

;; Asks a human for network access to a host the command does not name (a configured
;; remote, a proxy, a listener), except git fetching from its configured remote
;; (`git pull`, `git fetch`, `git submodule update`) and `docker compose build` pulling base
;; images, which are everyday work.
(defrule egress-network-unnamed-host
  (effect (proposal ?id) (index ~-1) (kind network) (target "") (program ?p) (subcommand ?s) (via ?v))
  (test (not (or (and (eq ?p "git") (member$ ?s (create$ "fetch" "pull" "clone" "ls-remote" "submodule update" "remote-update")))
                 (and (eq ?p "docker") (eq ?s "compose build"))
                 ;; a build's own downloads, not its deploy/publish tasks (effects.toml matches)
                 (and (member$ ?p (create$ "mvn" "mvnw" "gradle" "gradlew")) (eq ?v "program")))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-network-unnamed-host)
                    (reason (str-cat ?p " " ?s " reaches the network (host not named in the command)")))))

;; Asks a human before publishing or releasing (`npm publish`, `cargo publish`, `git push`,
;; `docker push`, `npm login`, `cargo yank`): it leaves the machine for good, under the
;; user's name, even to an allowlisted registry.
(defrule egress-publish
  (effect (proposal ?id) (kind network) (program ?p)
          (subcommand ?s&"publish"|"unpublish"|"yank"|"deprecate"|"push"|"upload"|"release"|"login"|"adduser"|"owner"|"dist-tag"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-publish)
                    (reason (str-cat ?p " " ?s " publishes or changes a registry")))))

;; TRUE for a package spec that is a URL or a VCS spec (`git+https://…`, `https://…/x.tar.gz`).
(deffunction egress-package-url-word-p (?a)
  (regex-match "^(git|hg|svn|bzr)\\+|^[A-Za-z][A-Za-z0-9+.-]*://" ?a))

;; Asks a human when a package manager installs from a URL or a VCS spec (`pip install -e
;; git+https://…`, `pip install https://…/x.tar.gz`, `uv pip install git+ssh://…`): the code
;; comes from wherever the URL points and its build scripts run.
(defrule egress-package-from-url
  (or (shell-command (proposal ?id) (program ?p&"pip") (argv $? ?a&:(egress-package-url-word-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"pip3") (argv $? ?a&:(egress-package-url-word-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"uv") (argv $? ?a&:(egress-package-url-word-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"pipx") (argv $? ?a&:(egress-package-url-word-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"poetry") (argv $? ?a&:(egress-package-url-word-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"pdm") (argv $? ?a&:(egress-package-url-word-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"npm") (argv $? ?a&:(egress-package-url-word-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"yarn") (argv $? ?a&:(egress-package-url-word-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"pnpm") (argv $? ?a&:(egress-package-url-word-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"cargo") (argv $? ?a&:(egress-package-url-word-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"gem") (argv $? ?a&:(egress-package-url-word-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"go") (argv $? ?a&:(egress-package-url-word-p ?a) $?)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-package-from-url)
                    (reason (str-cat ?p " installs from a URL: " ?a)))))

;; Asks a human when curl or wget sends data (`curl -d …`, `curl -F f=@x`, `curl -T file`,
;; `curl --json …`, `wget --post-data …`), even to an allowlisted host: it changes state
;; (opens issues, creates gists) and can carry anything out, like a POST from the HTTP
;; actuator.
(defrule egress-shell-upload
  (or (shell-command (proposal ?id) (program ?p&"curl") (argv $? ?a&:(egress-upload-word-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"wget") (argv $? ?a&:(egress-upload-word-p ?a) $?)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule egress-shell-upload)
                    (reason (str-cat ?p " sends data (" ?a ")")))))
