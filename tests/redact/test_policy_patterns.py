"""The default policy's patterns for the misses found on public labelled corpora (issue 24).

Each class of miss seen on CredSweeper's and gitleaks' samples (benchmarks/_external_corpora.py)
has cases here, with values of our own: token formats that had no pattern or a rejected variant,
patterns with no end boundary, JWK private fields, and secrets in code and commands. Every
secret must go, whole, and the text around it must stay as it was; the look-alikes below must
come back unchanged.
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

import pytest

from harn_mcp_mock.redact import PLACEHOLDER_RE, RedactionPolicy
from tests.redact.credentials import record_texts

RNG = random.Random(2024)
LOWER_DIGITS = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits


def pick(alphabet: str, n: int) -> str:
    """``n`` characters of ``alphabet`` with at least one digit (so no run is a plain word)."""
    out = [RNG.choice(alphabet) for _ in range(n)]
    digits = [c for c in alphabet if c.isdigit()]
    if digits and not any(c.isdigit() for c in out):
        out[n // 2] = digits[n % len(digits)]
    return "".join(out)


def hexs(n: int, upper: bool = False) -> str:
    return pick("0123456789ABCDEF" if upper else "0123456789abcdef", n)


def b32(n: int) -> str:
    return "".join(RNG.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(n))


def jwt() -> str:
    return f"eyJhbGciOiJIUzI1NiJ9.{pick(ALNUM, 40)}.{pick(ALNUM + '-_', 43)}"


# (case name, the secret, the text it sits in: "{s}" marks it)
TOKEN_FORMATS: list[tuple[str, str, str]] = [
    ("cloudflare account token", "cfat_" + pick(ALNUM, 48), "token: {s}"),
    ("cloudflare user token", "cfut_" + pick(ALNUM, 48), "use {s} for the zone"),
    ("cloudflare api key", "cfk_" + pick(ALNUM, 48), "({s})"),
    ("heroku platform key", "HRKU-AA" + pick(ALNUM + "_-", 58), "heroku {s}"),
    ("heroku uuid-shaped key", f"HRKU-{hexs(8)}-{hexs(4)}-{hexs(4)}-{hexs(4)}-{hexs(12)}", "k={s};"),
    ("posthog project key", "phc_" + pick(ALNUM, 43), "posthog.init('{s}')"),
    ("llama api key", "llx-" + pick(ALNUM + "_-", 48), "LLAMA {s}"),
    ("together ai key", "tgp_v1_" + pick(ALNUM + "_-", 43), "key {s} end"),
    ("vercel token", "vcp_" + pick(ALNUM, 56), "vercel login {s}"),
    ("notion token, letters after the digits", "ntn_" + hexs(9) + pick(ALNUM, 37), "notion: {s}"),
    ("sendgrid key, 36 characters", f"SG.{pick(ALNUM, 16)}.{pick(ALNUM, 16)}", "mail via {s}"),
    ("twilio api key, upper-case hex", "SK" + hexs(32, upper=True), "sid {s}"),
    ("gitlab runner registration token", "glrtr-" + pick(ALNUM + "_-", 39), "register {s}"),
    ("gitlab workspace token", "glwt-" + pick(ALNUM, 32), "ws {s}"),
    ("gitlab routable pat", f"glpat-{pick(ALNUM, 20)}.01.{pick(LOWER_DIGITS, 9)}", "PAT {s} # personal"),
    ("docker organisation token", "dckr_oat_" + pick(ALNUM + "_-", 32), "docker {s}"),
    ("stripe publishable key", "pk_live_" + pick(ALNUM, 24), "Stripe('{s}')"),
    (
        "docker swarm join token",
        f"SWMTKN-1-{pick(LOWER_DIGITS, 50)}-{pick(LOWER_DIGITS, 25)}",
        "join --token x {s}",
    ),
    ("docker swarm unlock key", "SWMKEY-1-" + pick(ALNUM + "+/", 43), "unlock {s}"),
    ("brevo api key", f"xkeysib-{hexs(64)}-{pick(ALNUM, 16)}", "brevo {s}"),
    (
        "defined networking key",
        f"dnkey-{pick(string.ascii_uppercase + '234567', 26)}-{pick(string.ascii_uppercase + '234567', 52)}",
        "nebula {s}",
    ),
    ("bitbucket http access token", "BBDC-" + pick(ALNUM, 44), '"bb": "{s}"'),
    ("akamai client token", f"akab-{pick(LOWER_DIGITS, 16)}-{pick(LOWER_DIGITS, 16)}", "client_tok {s}"),
    ("bedrock long-lived key", "ABSK" + pick(ALNUM + "+/", 120) + "=", "bedrock {s}"),
    ("bedrock short-lived key", "bedrock-api-key-" + pick(ALNUM + "+/", 60), "short {s}"),
    (
        "aws mws key",
        f"amzn.mws.{pick(LOWER_DIGITS, 8)}-{pick(LOWER_DIGITS, 4)}-{pick(LOWER_DIGITS, 4)}-"
        f"{pick(LOWER_DIGITS, 4)}-{pick(LOWER_DIGITS, 12)}",
        "MWS = '{s}'",
    ),
    ("github app installation token, dated", "ghs_20251107_" + jwt(), "install {s}"),
    ("instagram token", "IGQVJ" + pick(ALNUM + "_-", 140), "ig {s}"),
    ("new relic browser key", "NRBR-" + hexs(19), "nr {s}"),
    ("new relic regional license key", "eu01x" + hexs(31) + "NRAL", "license {s}"),
    ("nats nkey seed", "SU" + b32(56), "// {s}"),
    ("ntlm authenticate message", "TlRMTVNTUAADAAAA" + pick(ALNUM + "+/", 60) + "==", "ntlm {s}"),
    ("mailgun private key", f"{hexs(32)}-{hexs(8)}-{hexs(8)}", "mg {s}"),
    ("mailchimp key, any letters", pick(ALNUM, 32) + "-us21", "mc = {s}"),
    ("jfrog reference token", "cmVmdGtuOjAxOj" + pick(ALNUM, 50), "rt {s}"),
    ("azure devops pat", pick(ALNUM, 52) + "JQQJ99" + pick(ALNUM, 26), "pat {s}"),
    ("postman token", "PMAT-" + pick(string.ascii_uppercase + string.digits, 26), "postman {s}"),
    ("supabase v0 token", "sbp_v0_" + hexs(40), "supabase {s}"),
    ("tavily key", "tvly-" + pick(ALNUM, 32), "tvly {s} # key"),
    ("salesforce session id", "00D" + pick(ALNUM, 12) + "!" + pick(ALNUM + ".", 80), "sid {s}"),
    ("wundergraph key", "cosmo_" + hexs(32), "cosmo {s}"),
    (
        "1password secret key",
        f"A3-{pick(string.ascii_uppercase + string.digits, 6)}-{pick(string.ascii_uppercase + string.digits, 11)}-"
        f"{pick(string.ascii_uppercase + string.digits, 5)}-{pick(string.ascii_uppercase + string.digits, 5)}-"
        f"{pick(string.ascii_uppercase + string.digits, 5)}",
        "emergency kit: {s}",
    ),
    ("adobe client secret", "p8e-" + pick(ALNUM, 32), "adobe {s}"),
    ("fly.io macaroon", "fo1_" + pick(ALNUM + "_-", 43), "\n{s}\nfly deploy"),
    ("42 intra secret", "s-s4t2ud-" + hexs(64), "intra {s}"),
    ("openshift user token", "sha256~" + pick(ALNUM + "_-", 43), "oc login --token x {s}"),
    (
        "slack app token, any letters",
        f"xapp-1-A{pick(string.digits, 10)}-{pick(string.digits, 13)}-{pick(LOWER_DIGITS, 64)}",
        "{s}",
    ),
    ("sourcegraph token, mixed-case hex", f"sgp_{hexs(16, upper=True)}_{hexs(40, upper=True)}", "sg {s}"),
    ("stripe restricted prod key", "rk_prod_" + pick(ALNUM, 99), "stripe {s}"),
    ("posthog personal key, longer", "phx_" + pick(ALNUM, 60), "ph {s}"),
    ("posthog secret key", "phs_" + pick(ALNUM, 46), "ph {s}"),
    ("azure devops pat, long tail", pick(ALNUM, 52) + "JQQJ99" + pick(ALNUM, 30) + "==", "devops {s}"),
    (
        "gitlab routable pat, upper-case tail",
        f"glpat-{pick(ALNUM, 20)}.01.{pick(string.ascii_uppercase, 9)}",
        "{s}",
    ),
    (
        "atlassian token with an escaped checksum",
        "ATATT3" + pick(ALNUM + "_-", 170) + "\\=" + hexs(8, upper=True),
        "jira = {s}",
    ),
    ("atlassian token, url-escaped checksum", "ATATT3" + pick(ALNUM + "_-", 170) + "%3D" + hexs(8), "u={s}"),
    (
        "atlassian token of another generation, in a sentence",
        "ATATT" + pick(ALNUM, 44) + "=" + pick(ALNUM, 8),
        "Here's the token to try the tracker's APIs: {s}",
    ),
    ("dropbox long-lived token", pick(ALNUM, 11) + "AAAAAAAAAA" + pick(ALNUM + "_-", 43), "var g = '{s}'"),
    (
        "base64-wrapped pem private key",
        "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t" + pick(ALNUM + "+/", 120) + "=",
        "key: {s}",
    ),
    (
        "ssh2 private key block",
        '---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "2048-bit rsa"\n'
        + "\n".join(pick(ALNUM + "+/", 64) for _ in range(4))
        + "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----",
        "key file:\n{s}\nend",
    ),
    ("openai key after an ansi colour code", "sk-" + pick(ALNUM, 40), "\x1b[93m{s}\x1b[0m"),
    # A webhook URL is itself the credential: it goes whole, scheme and host too.
    (
        "slack webhook url",
        f"https://hooks.slack.com/services/T{hexs(10, True)}/B{hexs(10, True)}/{pick(LOWER_DIGITS, 24)}",
        '"hook": "{s}",',
    ),
    (
        "slack workflow url, no scheme",
        f"hooks.slack.com/workflows/{pick(LOWER_DIGITS, 44)}",
        "post to {s} now",
    ),
    (
        "discord webhook url",
        f"https://discordapp.com/api/webhooks/{pick(string.digits, 18)}/{pick(ALNUM + '_-', 68)}",
        "POST {s}",
    ),
    (
        "facebook app token, app id and secret",
        f"{pick(string.digits, 16)}|{pick(ALNUM + '_-', 27)}",
        "fb {s}",
    ),
    ("jwt with base64 padding", jwt() + "==", "token {s} end"),
    ("telegram bot token, A and 34", f"{pick(string.digits, 9)}:A{pick(ALNUM + '_-', 34)}", "bot {s} ok"),
]

# The secret is a value in a statement or command whose shape tells it is one.
IN_CODE: list[tuple[str, str, str]] = [
    ("go short assignment", pick(ALNUM, 32), 'apiToken := "{s}"'),
    ("go raw string", pick(ALNUM, 32), "deployToken := `{s}`"),
    ("make simple assignment", pick(ALNUM, 32), 'SERVICE_TOKEN ::= "{s}"'),
    ("make conditional assignment", pick(ALNUM, 32), 'SERVICE_TOKEN ?= "{s}"'),
    ("php append", pick(ALNUM, 32), '$authToken .= "{s}";'),
    ("logstash arrow", pick(ALNUM, 32), '  "sessionSecret" => "{s}"'),
    ("perl arrow, unquoted", "Qx7#vLm29p", "password=>{s}"),
    ("go typed var", pick(ALNUM, 32), 'var buildToken string = "{s}"'),
    ("scala typed val", "w8Rk2mQp5Z", 'val password: String = "{s}",'),
    ("python typed default", "t5Lp9Wq2Zr", 'def connect(passwd: str = "{s}"):'),
    ("comparison", "Zr4kLm8Qw2", 'if password == "{s}":'),
    ("negated comparison", "p2Mx7Kq9Vb", "if db_password != '{s}': raise"),
    ("c define", "k3Vz8Wq1Rt", '#define PASSWORD "{s}"'),
    ("c define, json-escaped tabs", "k3Vz8Wq1Ru", '"#define\\tpassword\\t\\"{s}\\""'),
    ("short name, unquoted :=", "Wm4kQ8zP2x", "PW:={s}"),
    ("misspelt name, unquoted :=", "Wm4kQ8zP2y", "PSSWD:={s}"),
    ("xml element with attributes", "Xk9!mQ2wZ", '<password name="password">{s}</password>'),
    (
        "mysql identified with plugin as hash",
        "*" + hexs(40, upper=True),
        "IDENTIFIED WITH 'mysql_native_password' AS '{s}'",
    ),
    ("rpm macro", pick(ALNUM, 40), "%global api_token {s}"),
    ("php define", "Hq4vN7xB2m", "define( 'DB_PASSWORD' , '{s}' );"),
    ("java system property", pick(ALNUM, 32), 'System.setProperty("SERVICE_TOKEN", "{s}")'),
    ("xml element over lines", pick(ALNUM, 32), "<apiToken>\n    {s}\n</apiToken>"),
    ("--password in free text", "Vb7nQ2xZ9k", "mysql -u root --password {s} -h db"),
    ("-Password in powershell", "Rt5#mK8qW", "-Domain 'corp' -Password '{s}'"),
    ("--passphrase", "Lx4pW9zQ2m", "gpg --decrypt --passphrase {s} --output a.txt a.gpg"),
    ("--token=", pick(ALNUM, 24), "cli deploy --token={s} --yes"),
    ("-secret", "Jz8kQ3mV7x", "app -secret {s}"),
    ("-secret at the start of a line", "Jz8kQ3mV7y", "options:\n-secret {s}"),
    ("-password at the start of the text", "Jz8kQ3mV7z", "-password={s}"),
    ("--oauth2-bearer", pick(ALNUM, 24) + "==", '    --oauth2-bearer "{s}" \\'),
    ("--api-key", pick(ALNUM, 24), "tool --api-key {s} list"),
    ("openssl -passin", "Nq3#zW7pL", 'openssl x509 -req -passin "pass:{s}" -in a.csr'),
    ("ConvertTo-SecureString", "Qm7vX2#kL9", 'ConvertTo-SecureString -String "{s}" -AsPlainText -Force'),
    # curl's -u argument is one credential, user:password: it goes whole (with its quotes).
    ("curl -u", "admin:Hp4kZ8wQ2n", "curl -X PUT -u {s} https://example.org/api"),
    ("curl --user, quoted", '"ops:Wm3qV8zK5x"', "curl --user {s} https://example.org"),
    ("curl -u on a continued line", "dev:Ys4kW9mQ2z", "curl -X POST https://example.org \\\n  -u {s}"),
    ("curl -u, letters only, mixed case", "dev:yqHvTbkqPEcrLaRi", "curl -k https://example.org \\\n  -u {s}"),
    ("curl --user, quoted password", "kevin:'pRf7vG2h1L8nQkW9'", "curl --user {s} -iX PATCH"),
    ("curl -u with no user", '":Ys4kW9mQ2y"', "curl -u {s} https://example.org"),
    ("curl --user, single-quoted, e-mail user", "'ada@example.org:Qp7vK2mZ9w'", "curl -s --user {s} \\"),
    ("php secret_key arrow", "Wq8#zL3mP5", '"secret_key" => "{s}",'),
    (
        "sidekiq enterprise credentials",
        f"{hexs(8)}:{hexs(8)}",
        "export BUNDLE_ENTERPRISE__CONTRIBSYS__COM={s}",
    ),
    ("nuget cleartext password", "Nu7gK2pQ9x", '<add key="ClearTextPassword" value="{s}" />'),
    ("libcurl password option", pick(ALNUM, 32), 'curl_easy_setopt(h, CURLOPT_PASSWORD, "{s}");'),
    ("libcurl userpwd option", "svc:Tz6kQ2mW9p", 'curl_easy_setopt(h, CURLOPT_USERPWD, "{s}");'),
    ("libcurl proxy userpwd option", "px:Tz6kQ2mW9q", 'setopt(h, CURLOPT_PROXYUSERPWD, "{s}");'),
    ("sidekiq enterprise url", f"{hexs(8)}:{hexs(8)}", "source 'https://{s}@enterprise.contribsys.com/'"),
    ("libcurl oauth bearer option", pick(ALNUM, 48), 'curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, "{s}");'),
    ("mysql identified by", "Sq9Lp2wX7z", "CREATE USER 'app'@'%' IDENTIFIED BY '{s}';"),
    ("mysql identified by, unquoted", "Sq9Lp2wX7a", "ALTER USER app IDENTIFIED BY {s};"),
    (
        "mysql identified with plugin by",
        "Sq9Lp2wX7b",
        "ALTER USER 'a'@'h' IDENTIFIED WITH mysql_native_password BY '{s}';",
    ),
    ("postgres with password", "Pg4kW8zQ2m", "CREATE USER app WITH ENCRYPTED PASSWORD '{s}' CREATEDB;"),
    ("postgres login password", "Pg4kW8zQ2n", "CREATE ROLE web LOGIN PASSWORD '{s}';"),
    ("postgres alter role password", "Pg4kW8zQ2p", "ALTER ROLE postgres PASSWORD '{s}';"),
    ("url with @ in the user", "Fz8kQ2wM5x", "smtps://ops@example.org:{s}@mail.example.org:465"),
    ("jwk symmetric k", pick(ALNUM + "-_", 43), '{"kty": "oct", "k": "{s}", "alg": "HS256"}'),
    # Names the key rules do not take but that read like a secret's name, with a value that
    # looks like a credential (three kinds of characters and a digit, or dash-joined groups).
    ("spaced name", "Qm4vL8zK2wP9", "SECRET KEY:{s}"),
    ("spaced name, lower case", "Qm4vL8zK2wP8", "access key: {s}"),
    ("spaced name, spaces around the colon", "ZQWAS-4CDER-VBGTR-FRTGU-KLMNX", "Activation key : {s}"),
    ("misspelt name compared", "q7c1a2oPdW", 'if passwrod == "{s}":'),
    ("misspelt name, not equal", "x6s7djtEaQ", 'if pasword != "{s}": # ne'),
    ("a name ending in pass", "Ce7shE0ENPiBlE_Ed", "MYSQLPASS: {s}"),
    ("camelCase short name", "Xy7#kQ2mVz", 'dbPass = "{s}"'),
    ("bare key", "Vb8kQ2mZ9xLp", "$key = '{s}';"),
    ("key query parameter", pick(ALNUM, 32), "https://example.org/api/js?key={s}&v=3"),
    ("token name with a trailing word", pick(ALNUM, 32), 'tp_token_value="{s}"'),
    ("triple-quoted value", pick(ALNUM, 30), "key_multi = '''{s}'''"),
    ("authentication name in json text", pick(ALNUM, 38), '"kerberos_authentication": "{s}"'),
    ("signature name", pick(ALNUM, 27) + "%3D", 'oauth_signature="{s}"'),
    (
        "uuid-shaped key",
        f"{hexs(8)}-{hexs(4, True)}-{hexs(4)}-{hexs(4)}-{hexs(12)}",
        'const HEROKU_KEY = "{s}"',
    ),
    ("an access id", "su" + pick(ALNUM, 12), 'sumologic.accessId = "{s}"'),
    ("a name ending in api", pick(ALNUM, 21), 'gateway_api = "{s}";'),
    # Text escaped for HTML or URL-encoded: the rules run on it unescaped.
    ("html-escaped quotes", "g2re0g1T0keN3zWq", '<a href="http://example.org?token=&quot;{s}&quot;">x</a>'),
    ("html attribute", "g2re0g1Pa5$w0Rq", '    placeholder="Your password: &quot;{s}&quot;"'),
    (
        "escaped twice, in a draw.io cell",
        "Df35D&amp;lt;345&amp;amp;&amp;gt;gq",
        'value="&lt;div&gt;pass: {s}&lt;/div&gt;"',
    ),
    (
        "url-encoded query",
        "h1d3Me4ch534d801sl3jdq",
        "u = 'https://example.org/x?26ts%3D1395%26token%3D{s}%26version%3D3'",
    ),
    # Formats with a tell of their own
    (
        "atlassian pat",
        base64.b64encode(b"926607655526:" + RNG.randbytes(20)).decode(),
        "https://jira.example.org/api/token/{s}",
    ),
    ("authenticator seed, 16", b32(12) + "23" + b32(2), "{s}"),
    ("authenticator seed, 32", "JB" + b32(10) + "K5" + b32(18), "secret:\n{s}\n"),
    (
        "der private key without armour, over lines",
        "MIIBOgIBAAJBAJ" + pick(ALNUM + "+/", 50) + "\n        " + pick(ALNUM + "+/", 64),
        "<data>\n        {s}\n    </data>",
    ),
    (
        "xml element, quoted, over lines",
        pick(ALNUM, 40) + "\n        " + pick(ALNUM, 30) + "==",
        '<token name="t">\n  "{s}"\n</token>',
    ),
    ("c byte array", ", ".join(f"0x{hexs(2)}" for _ in range(12)), "#define AESKEY {{s}}"),
    (
        "c byte array over continued lines",
        "0x35, 0x34, 0x65, 0x9b, \\\n    0x1c, 0x2e, 023, 010, 041",
        "#define HMAC_KEY {{s}}",
    ),
    (
        "go byte slice",
        ", ".join(str(RNG.randrange(256)) for _ in range(16)),
        "cfg := Config{Secret: []byte{{s}}}",
    ),
    (
        "c key array",
        ", ".join(str(RNG.randrange(256)) for _ in range(16)),
        "static const uint8_t key[16] = {{s}};",
    ),
    ("getenv default", "GEHEIMN2S", 'if SECRET := getenv("APP_SECRET", "{s}"):'),
    ("environ fallback", "at5G6zi!q", 'PASSWORD = os.environ.get("PASSWORD") or "{s}"'),
    ("process.env fallback", "Zk9#vLm2Qp", 'const apiToken = process.env.API_TOKEN || "{s}";'),
    ("jwk ec d", pick(ALNUM + "-_", 43), '{"kty":"EC","crv":"P-256","x":"abc","y":"def","d":"{s}"}'),
]


@pytest.mark.parametrize(
    ("secret", "text"),
    [(s, t) for _n, s, t in TOKEN_FORMATS + IN_CODE],
    ids=[n for n, _s, _t in TOKEN_FORMATS + IN_CODE],
)
def test_the_secret_is_replaced_whole_and_nothing_else_changes(secret: str, text: str) -> None:
    line = text.replace("{s}", secret)
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(line)
    assert out == text.replace("{s}", "[REDACTED:1]"), (line, out)


def test_the_same_secrets_are_gone_from_a_tool_result() -> None:
    texts = "\n".join(t.replace("{s}", s) for _n, s, t in TOKEN_FORMATS + IN_CODE)
    message = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": texts}]}}
    out = RedactionPolicy.default().redactor().redact_message(message)["result"]["content"][0]["text"]
    for _n, secret, _t in TOKEN_FORMATS + IN_CODE:
        assert secret not in out


@pytest.mark.parametrize(
    "length",
    [16, 24],  # Alibaba AccessKey ids: LTAI + 12 or + 20
)
def test_an_alibaba_key_id_goes_whole_and_a_longer_run_is_not_cut(length: int) -> None:
    key = "LTAI" + pick(ALNUM, length - 4)
    red = RedactionPolicy.default().redactor()
    assert red.redact_text(f"id {key}, next") == "id [REDACTED:1], next"
    longer = key + pick(ALNUM, 6)
    # (a fresh redactor: this one remembers the key and replaces it glued into longer text)
    out = RedactionPolicy.default().redactor().redact_text(f"id {longer} end")
    assert out == f"id {longer} end" or out == "id [REDACTED:1] end"
    remembered = red.redact_text(f"id {longer} end")
    assert key not in remembered and remembered.startswith("id [REDACTED:")


def test_an_alibaba_secret_next_to_its_key_id_goes_too() -> None:
    key, secret = "LTAI" + pick(ALNUM, 20), pick(ALNUM, 30)
    out = RedactionPolicy.default().redactor().redact_text(f"client({key}, {secret})")
    assert key not in out and secret not in out


KEPT = [
    "cli --password-file /etc/app/password.txt",
    "  --token TOKEN      the token to send",
    "gh auth login --token $GITHUB_TOKEN",
    "mysql --password <password>",
    "docker run -u 1000:1000 alpine",
    'if password == "":',
    'if token != "none":',
    "max_tokens := 1024",
    "nextPageToken := page.Next",
    '{"kty": "RSA", "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbf", "e": "AQAB"}',
    '{"d": "2025-11-07", "k": 3}',
    "CREATE USER app IDENTIFIED EXTERNALLY;",
    "SELECT password FROM users WHERE id = 7;",
    "https://example.org:8443/path@v2",
    "var tokenizer = newTokenizer()",
    "<token>\n</token>",
    "%define _topdir /home/build/rpmbuild",
    'curl -u "$USERNAME:$PASSWORD" https://example.org',
    "curl -i -u 'test:test'",
    "curl http://127.0.0.1:5000/file --user user:pass --digest",
    "curl --user neo4j:[PASSWORD] http://db:7474/",
    '<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />',
    "TOKEN := $(shell cat token.txt)",
    "deploy --token MY_TOKEN_PLACEHOLDER",
    "curl -u <user:password> https://example.org/endpoint",
    "task_test_qr1ai8nz5km1pm9ncdqr2qbdjat4ng",
    'compass := "N42.5"',
    "bypass := cache-v2",
    "ca.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJJakFOQmdrcWhraUc5dzBCQVFFRkFBT0NBUThBTUlJQkNnS0NBUUVB",
    # templates, placeholders and references after a secret name
    'hf_token = "ADD_YOUR_ACCESS_TOKEN_HERE"',
    '  -H "Authorization: Bearer $API_KEY" \\',
    '  -H "Authorization: Bearer <your api token>" \\',
    "-H 'Authorization: Bearer $(gcloud auth print-access-token)'",
    "db_password = var.db_password",
    'password = "${aws_db_instance.main.password}"',
    "ACCESS_KEY={AccessKey}",
    "ACCESS_KEY=`vault read -field=key secret/app`",
    "  - secretKey: api-key",
    # names that only read like a secret's, with values that do not look like a credential
    "key: city",
    "sort_key = created_at",
    "monkey = banana12",
    "session: web-01.prod.example.org",
    "key_file = server.key",
    "token_url = https://example.org/oauth2/token?x=Ab1",
    "signature_version = 4",
    "primary key: (id, created_at)",
    "cache key: user_12345",
    "compass_key: North-West-By-North",
    "PUBLIC KEY: MFkwEwYHKoZIzj0CAQ6Ab",
    "session_count = Ab12Cd34Ef",
    "OLDPWD=/home/ada/src2/Proj-X",
    "apiVersion: v2024-01",
    "rest_api = https://api.example.org/v2",
    "01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "ABCDEFGHIJKLMNOP",
    "&lt;b&gt;bold&lt;/b&gt; &amp; more at https://example.org/?a=1&amp;b=2",
    "search?q%3Dhello%26page%3D2%26token%3D",
    "keys = {1, 2, 3, 4, 5, 6, 7, 8, 9}",
    "int primes[] = {2, 3, 5, 7, 11, 13, 17, 19};",
    'HOME = os.environ.get("HOME") or "/root"',
    'token = os.getenv("TOKEN", "")',
    "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA",
    # request ids that happen to be base32 (an S3 request id: 16 upper-case letters and digits)
    "x-amz-request-id: QXVDMKR4SJT3LXPN",
    "request_id=QXVDMKR4SJT3LXPN",
    '{"requestId": "QXVDMKR4SJT3LXPN"}',
]


@pytest.mark.parametrize("text", KEPT)
def test_look_alikes_are_kept(text: str) -> None:
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(text)
    assert not PLACEHOLDER_RE.search(out), (text, out)


def test_an_authenticator_seed_named_an_id_is_kept_and_the_rule_stays_one_run_wide() -> None:
    # The id's name is read off the hits, not by the expression: a lookbehind over the name made
    # the rule depend on what surrounds its run, so it ran on every whole text (a clean
    # message's cost +50%) instead of once per distinct run.
    rule = next(r for r in RedactionPolicy.default().compiled().patterns if r.name == "otp-seed")
    assert rule.contained
    red = RedactionPolicy.default().redactor(argv=["srv"], env={})
    assert red.redact_text("seed: QXVDMKR4SJT3LXPN, x-amz-request-id: QXVDMKR4SJT3LXPM") == (
        "seed: [REDACTED:1], x-amz-request-id: QXVDMKR4SJT3LXPM"
    )


def test_a_recording_of_a_server_that_serves_them_writes_none_of_them(tmp_path: Path) -> None:
    """``harn mcp mock record`` as a real process, in front of a server whose tool results are
    the texts above: no written byte holds a secret, raw or JSON-escaped."""
    cases = TOKEN_FORMATS + IN_CODE
    written = record_texts(tmp_path, [t.replace("{s}", s) for _n, s, t in cases])
    assert b"[REDACTED:" in written
    for name, secret, _t in cases:
        for form in (secret, json.dumps(secret)[1:-1]):
            assert form.encode() not in written, name
