"""The redaction corpus: fake, format-valid credentials and harmless look-alikes.

Generated deterministically from a seed (no network, nothing committed but this script): run
``python -m tests.redaction_corpus.corpus`` to print counts, or ``--dump FILE`` to write the
corpus as JSON for inspection. The checklist is the public rule sets of gitleaks
(``config/gitleaks.toml``) and trufflehog (its detectors): cloud keys and SAS signatures,
CI/CD and package-registry tokens, observability keys, payment, chat, VCS, database DSNs,
private keys of every PEM/OpenSSH/PGP kind, JWTs, webhook URLs, LLM API keys, passwords in
URLs and in JSON fields named like secrets.

Each :class:`Secret` says where it lives in real life: ``env`` is the environment variable a
server reads it from (its lower-cased form is the JSON key and ``--flag`` it travels under),
and ``tell`` how a redactor can know it is a secret when it is seen *without* that context:
``"format"`` (a known prefix or shape: it is caught wherever it appears) or ``"context"``
(hex-, UUID- or plain random-shaped: only its name, flag, variable or the recording's own
env says it is a secret, so it is only planted free-standing where that context exists).

The values are assembled from random characters at run time so that this file holds none.
"""

from __future__ import annotations

import base64
import json
import random
import string
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass

SEED = 20261123

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
HEX = "0123456789abcdef"
HEXU = "0123456789ABCDEF"
ALNUM = UP + LO + DIG
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
B32 = UP + "234567"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


@dataclass(frozen=True)
class Secret:
    format: str
    value: str
    env: str
    """The environment variable it comes from (its lower-cased name is its JSON key and flag)."""
    tell: str
    """``"format"``: recognisable anywhere; ``"context"``: only by name, flag, variable or env."""

    @property
    def key(self) -> str:
        return self.env.lower()

    @property
    def flag(self) -> str:
        return "--" + self.env.lower().replace("_", "-")


@dataclass(frozen=True)
class Harmless:
    kind: str
    value: str


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def r(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def mixed(self, n: int, alphabet: str = ALNUM) -> str:
        """``n`` random characters holding at least one upper, one lower and one digit."""
        while True:
            s = self.r(alphabet, n)
            if any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s):
                return s

    def uuid(self) -> str:
        h = self.r(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.rng.choice('89ab')}{h[17:20]}-{h[20:]}"

    def b64(self, nbytes: int, *, url: bool = False, pad: bool = True) -> str:
        raw = bytes(self.rng.randrange(256) for _ in range(nbytes))
        out = base64.urlsafe_b64encode(raw) if url else base64.b64encode(raw)
        text = out.decode()
        return text if pad else text.rstrip("=")

    def jwt(self, claims: dict[str, object]) -> str:
        def part(obj: dict[str, object]) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

        return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(claims)}.{self.b64(32, url=True, pad=False)}"

    def pem(self, label: str, nbytes: int = 600, headers: str = "") -> str:
        body = self.b64(nbytes)
        lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
        return f"-----BEGIN {label}-----\n{headers}{lines}\n-----END {label}-----\n"


def _secret_specs(g: _Gen) -> list[tuple[str, Callable[[], str], str, str]]:
    """(format, make value, env variable, tell)."""
    F, C = "format", "context"
    r, m, u = g.r, g.mixed, g.uuid
    return [
        # --- cloud ---
        ("aws-access-key-id", lambda: "AKIA" + r(B32, 16), "AWS_ACCESS_KEY_ID", F),
        ("aws-temporary-access-key-id", lambda: "ASIA" + r(B32, 16), "AWS_TEMP_ACCESS_KEY_ID", F),
        ("aws-secret-access-key", lambda: m(40, B64), "AWS_SECRET_ACCESS_KEY", C),
        ("aws-session-token", lambda: "IQoJb3JpZ2luX2Vj" + g.b64(300), "AWS_SESSION_TOKEN", F),
        ("gcp-api-key", lambda: "AIza" + r(B64URL, 35), "GOOGLE_API_KEY", F),
        ("gcp-oauth-client-secret", lambda: "GOCSPX-" + r(B64URL, 28), "GOOGLE_CLIENT_SECRET", F),
        ("gcp-oauth-access-token", lambda: "ya29.a0" + r(B64URL, 120), "GOOGLE_ACCESS_TOKEN", F),
        ("gcp-oauth-refresh-token", lambda: "1//0" + r(B64URL, 100), "GOOGLE_REFRESH_TOKEN", F),
        ("gcp-service-account-key", lambda: g.pem("PRIVATE KEY", 900), "GCP_SA_PRIVATE_KEY", F),
        (
            "azure-storage-connection-string",
            lambda: (
                "DefaultEndpointsProtocol=https;AccountName=harnacct;AccountKey="
                + g.b64(64)
                + ";EndpointSuffix=core.windows.net"
            ),
            "AZURE_STORAGE_CONNECTION_STRING",
            F,
        ),
        ("azure-storage-account-key", lambda: g.b64(64), "AZURE_STORAGE_KEY", C),
        (
            "azure-sas-url",
            lambda: (
                "https://harnacct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&srt=o&sp=r"
                "&se=2030-01-01T00:00:00Z&sig="
                + g.b64(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
            ),
            "AZURE_SAS_URL_SECRET",
            F,
        ),
        (
            "azure-ad-client-secret",
            lambda: r(ALNUM, 3) + r(DIG, 1) + "Q~" + r(ALNUM + "_~.-", 34),
            "AZURE_CLIENT_SECRET",
            F,
        ),
        ("azure-devops-pat", lambda: r(LO + DIG, 52), "AZURE_DEVOPS_PAT_TOKEN", C),
        ("digitalocean-pat", lambda: "dop_v1_" + r(HEX, 64), "DIGITALOCEAN_TOKEN", F),
        ("digitalocean-oauth", lambda: "doo_v1_" + r(HEX, 64), "DO_OAUTH_TOKEN", F),
        ("digitalocean-refresh", lambda: "dor_v1_" + r(HEX, 64), "DO_REFRESH_TOKEN", F),
        ("alibaba-access-key-id", lambda: "LTAI" + r(ALNUM, 20), "ALIBABA_ACCESS_KEY_ID", F),
        ("alibaba-secret-key", lambda: r(ALNUM, 30), "ALIBABA_SECRET_KEY", C),
        ("ibm-cloud-api-key", lambda: r(B64URL, 44), "IBM_CLOUD_API_KEY", C),
        ("heroku-api-key", u, "HEROKU_API_KEY", C),
        ("cloudflare-api-token", lambda: r(B64URL, 40), "CLOUDFLARE_API_TOKEN", C),
        ("cloudflare-global-api-key", lambda: r(HEX, 37), "CLOUDFLARE_API_KEY", C),
        ("cloudflare-origin-ca-key", lambda: "v1.0-" + r(HEX, 24) + "-" + r(HEX, 146), "CF_ORIGIN_CA_KEY", F),
        ("linode-token", lambda: r(HEX, 64), "LINODE_TOKEN", C),
        ("vultr-api-key", lambda: r(UP + DIG, 36), "VULTR_API_KEY", C),
        ("scaleway-secret-key", u, "SCW_SECRET_KEY", C),
        ("flyio-token", lambda: "FlyV1 fm2_" + r(B64, 200), "FLY_API_TOKEN", F),
        ("vercel-token", lambda: r(ALNUM, 24), "VERCEL_TOKEN", C),
        ("netlify-token", lambda: "nfp_" + r(ALNUM, 36), "NETLIFY_AUTH_TOKEN", F),
        ("supabase-token", lambda: "sbp_" + r(HEX, 40), "SUPABASE_ACCESS_TOKEN", F),
        (
            "supabase-service-role-jwt",
            lambda: g.jwt({"iss": "supabase", "role": "service_role"}),
            "SUPABASE_SERVICE_ROLE_KEY",
            F,
        ),
        ("planetscale-token", lambda: "pscale_tkn_" + r(B64URL, 43), "PLANETSCALE_TOKEN", F),
        ("planetscale-password", lambda: "pscale_pw_" + r(B64URL, 43), "PLANETSCALE_PASSWORD", F),
        ("doppler-token", lambda: "dp.pt." + r(ALNUM, 43), "DOPPLER_TOKEN", F),
        ("vault-service-token", lambda: "hvs." + r(B64URL, 90), "VAULT_TOKEN", F),
        ("vault-batch-token", lambda: "hvb." + r(B64URL, 138), "VAULT_BATCH_TOKEN", F),
        ("terraform-cloud-token", lambda: r(ALNUM, 14) + ".atlasv1." + r(B64URL, 67), "TFC_TOKEN", F),
        ("pulumi-token", lambda: "pul-" + r(HEX, 40), "PULUMI_ACCESS_TOKEN", F),
        ("databricks-token", lambda: "dapi" + r(HEX, 32), "DATABRICKS_TOKEN", F),
        ("snowflake-password", lambda: m(20), "SNOWFLAKE_PASSWORD", C),
        ("tailscale-auth-key", lambda: "tskey-auth-" + r(ALNUM, 17) + "-" + r(ALNUM, 33), "TS_AUTHKEY", F),
        ("onepassword-service-account", lambda: "ops_eyJ" + r(B64URL, 250), "OP_SERVICE_ACCOUNT_TOKEN", F),
        (
            "age-secret-key",
            lambda: (
                "AGE-SECRET-KEY-1"
                + r(UP.replace("B", "").replace("I", "").replace("O", "") + "023456789", 58)
            ),
            "AGE_SECRET_KEY",
            F,
        ),
        # --- CI/CD, VCS and package registries ---
        ("github-pat-classic", lambda: "ghp_" + r(ALNUM, 36), "GITHUB_TOKEN", F),
        ("github-oauth", lambda: "gho_" + r(ALNUM, 36), "GITHUB_OAUTH_TOKEN", F),
        ("github-app-installation", lambda: "ghs_" + r(ALNUM, 36), "GH_APP_TOKEN", F),
        ("github-user-to-server", lambda: "ghu_" + r(ALNUM, 36), "GH_USER_TOKEN", F),
        ("github-refresh", lambda: "ghr_" + r(ALNUM, 76), "GH_REFRESH_TOKEN", F),
        (
            "github-fine-grained-pat",
            lambda: "github_pat_" + r(ALNUM, 22) + "_" + r(ALNUM, 59),
            "GH_PAT_TOKEN",
            F,
        ),
        ("gitlab-pat", lambda: "glpat-" + r(B64URL, 20), "GITLAB_TOKEN", F),
        ("gitlab-runner-token", lambda: "glrt-" + r(B64URL, 20), "GITLAB_RUNNER_TOKEN", F),
        ("gitlab-deploy-token", lambda: "gldt-" + r(B64URL, 20), "GITLAB_DEPLOY_TOKEN", F),
        ("gitlab-ci-job-token", lambda: "glcbt-" + r(HEX, 2) + "_" + r(B64URL, 20), "CI_JOB_TOKEN", F),
        ("gitlab-pipeline-trigger", lambda: "glptt-" + r(HEX, 40), "GITLAB_TRIGGER_TOKEN", F),
        ("gitlab-runner-registration", lambda: "GR1348941" + r(B64URL, 20), "RUNNER_REGISTRATION_TOKEN", F),
        ("gitlab-oauth-app-secret", lambda: "gloas-" + r(HEX, 64), "GITLAB_OAUTH_SECRET", F),
        ("bitbucket-app-password", lambda: "ATBB" + r(ALNUM, 32), "BITBUCKET_APP_PASSWORD", F),
        (
            "atlassian-api-token",
            lambda: "ATATT3xFfGF0" + r(B64URL, 170) + "=" + r(HEXU, 8),
            "ATLASSIAN_API_TOKEN",
            F,
        ),
        ("npm-token", lambda: "npm_" + r(ALNUM, 36), "NPM_TOKEN", F),
        ("pypi-token", lambda: "pypi-AgEIcHlwaS5vcmc" + r(B64URL, 70), "PYPI_TOKEN", F),
        ("docker-hub-pat", lambda: "dckr_pat_" + r(B64URL, 27), "DOCKER_TOKEN", F),
        ("docker-registry-password", lambda: m(32), "DOCKER_PASSWORD", C),
        ("circleci-token", lambda: "CCIPAT_" + r(ALNUM, 22) + "_" + r(HEX, 40), "CIRCLECI_TOKEN", F),
        ("circleci-legacy-token", lambda: r(HEX, 40), "CIRCLE_TOKEN", C),
        ("travis-token", lambda: r(B64URL, 22), "TRAVIS_API_TOKEN", C),
        ("buildkite-token", lambda: "bkua_" + r(HEX, 40), "BUILDKITE_API_TOKEN", F),
        ("buildkite-agent-token", lambda: r(HEX, 50), "BUILDKITE_AGENT_TOKEN", C),
        ("nuget-api-key", lambda: "oy2" + r(LO + DIG, 43), "NUGET_API_KEY", F),
        ("rubygems-token", lambda: "rubygems_" + r(HEX, 48), "GEM_HOST_API_KEY", F),
        ("clojars-token", lambda: "CLOJARS_" + r(LO + DIG, 60), "CLOJARS_TOKEN", F),
        ("artifactory-api-key", lambda: "AKCp" + r(ALNUM, 69), "ARTIFACTORY_API_KEY", F),
        ("sonarqube-token", lambda: "squ_" + r(HEX, 40), "SONAR_TOKEN", F),
        ("sonarqube-project-token", lambda: "sqp_" + r(HEX, 40), "SONAR_PROJECT_TOKEN", F),
        ("snyk-token", u, "SNYK_TOKEN", C),
        ("codecov-token", u, "CODECOV_TOKEN", C),
        ("octopus-deploy-api-key", lambda: "API-" + r(UP + DIG, 26), "OCTOPUS_API_KEY", F),
        ("jenkins-api-token", lambda: "11" + r(HEX, 32), "JENKINS_API_TOKEN", C),
        ("sourcegraph-token", lambda: "sgp_" + r(HEX, 16) + "_" + r(HEX, 40), "SRC_ACCESS_TOKEN", F),
        ("gitea-token", lambda: r(HEX, 40), "GITEA_TOKEN", C),
        ("prefect-api-key", lambda: "pnu_" + r(ALNUM, 36), "PREFECT_API_KEY", F),
        ("readme-api-key", lambda: "rdme_" + r(LO + DIG, 70), "README_API_KEY", F),
        ("postman-api-key", lambda: "PMAK-" + r(HEX, 24) + "-" + r(HEX, 34), "POSTMAN_API_KEY", F),
        # --- observability ---
        ("datadog-api-key", lambda: r(HEX, 32), "DD_API_KEY", C),
        ("datadog-app-key", lambda: r(HEX, 40), "DD_APP_KEY", C),
        ("new-relic-user-key", lambda: "NRAK-" + r(UP + DIG, 27), "NEW_RELIC_API_KEY", F),
        ("new-relic-insert-key", lambda: "NRII-" + r(B64URL, 32), "NEW_RELIC_INSERT_KEY", F),
        ("new-relic-browser-key", lambda: "NRJS-" + r(HEX, 19), "NEW_RELIC_BROWSER_KEY", F),
        ("new-relic-license-key", lambda: r(HEX, 36) + "NRAL", "NEW_RELIC_LICENSE_KEY", F),
        (
            "sentry-dsn",
            lambda: f"https://{r(HEX, 32)}@o{r(DIG, 6)}.ingest.sentry.io/{r(DIG, 7)}",
            "SENTRY_DSN",
            F,
        ),
        (
            "sentry-org-token",
            lambda: "sntrys_eyJ" + r(B64URL, 120) + "_" + r(B64URL, 43),
            "SENTRY_AUTH_TOKEN",
            F,
        ),
        ("sentry-user-token", lambda: "sntryu_" + r(HEX, 64), "SENTRY_USER_TOKEN", F),
        ("grafana-cloud-token", lambda: "glc_" + r(B64, 120), "GRAFANA_CLOUD_TOKEN", F),
        ("grafana-service-account", lambda: "glsa_" + r(ALNUM, 32) + "_" + r(HEX, 8), "GRAFANA_SA_TOKEN", F),
        ("grafana-api-key", lambda: "eyJrIjoi" + r(B64, 64), "GRAFANA_API_KEY", F),
        ("honeycomb-api-key", lambda: r(ALNUM, 22), "HONEYCOMB_API_KEY", C),
        ("honeycomb-ingest-key", lambda: "hcaik_01" + r(LO + DIG, 50), "HONEYCOMB_INGEST_KEY", F),
        ("splunk-hec-token", u, "SPLUNK_HEC_TOKEN", C),
        ("dynatrace-token", lambda: "dt0c01." + r(UP + DIG, 24) + "." + r(UP + DIG, 64), "DT_API_TOKEN", F),
        ("lightstep-token", lambda: r(B64, 84), "LIGHTSTEP_ACCESS_TOKEN", C),
        ("pagerduty-token", lambda: "u+" + r(B64URL, 18), "PAGERDUTY_TOKEN", C),
        ("opsgenie-api-key", u, "OPSGENIE_API_KEY", C),
        ("rollbar-token", lambda: r(HEX, 32), "ROLLBAR_ACCESS_TOKEN", C),
        ("bugsnag-api-key", lambda: r(HEX, 32), "BUGSNAG_API_KEY", C),
        ("launchdarkly-api-key", lambda: "api-" + u(), "LAUNCHDARKLY_ACCESS_TOKEN", C),
        ("launchdarkly-sdk-key", lambda: "sdk-" + u(), "LD_SDK_KEY", C),
        ("posthog-personal-key", lambda: "phx_" + r(ALNUM, 43), "POSTHOG_PERSONAL_API_KEY", F),
        ("mixpanel-secret", lambda: r(HEX, 32), "MIXPANEL_API_SECRET", C),
        ("segment-write-key", lambda: r(ALNUM, 32), "SEGMENT_WRITE_KEY", C),
        # --- payment ---
        ("stripe-secret-key", lambda: "sk_live_" + r(ALNUM, 99), "STRIPE_SECRET_KEY", F),
        ("stripe-test-secret-key", lambda: "sk_test_" + r(ALNUM, 99), "STRIPE_TEST_KEY", F),
        ("stripe-restricted-key", lambda: "rk_live_" + r(ALNUM, 99), "STRIPE_RESTRICTED_KEY", F),
        ("stripe-webhook-secret", lambda: "whsec_" + r(ALNUM, 32), "STRIPE_WEBHOOK_SECRET", F),
        ("square-access-token", lambda: "EAAA" + r(B64URL, 60), "SQUARE_ACCESS_TOKEN", F),
        ("square-legacy-token", lambda: "sq0atp-" + r(B64URL, 22), "SQUARE_TOKEN", F),
        ("square-oauth-secret", lambda: "sq0csp-" + r(B64URL, 43), "SQUARE_OAUTH_SECRET", F),
        (
            "braintree-access-token",
            lambda: "access_token$production$" + r(LO + DIG, 16) + "$" + r(HEX, 32),
            "BRAINTREE_ACCESS_TOKEN",
            F,
        ),
        ("paypal-client-secret", lambda: "E" + r(B64URL, 79), "PAYPAL_CLIENT_SECRET", C),
        ("adyen-api-key", lambda: "AQE" + r(B64URL, 120), "ADYEN_API_KEY", C),
        ("shopify-access-token", lambda: "shpat_" + r(HEX, 32), "SHOPIFY_ACCESS_TOKEN", F),
        ("shopify-shared-secret", lambda: "shpss_" + r(HEX, 32), "SHOPIFY_SHARED_SECRET", F),
        ("shopify-custom-app-token", lambda: "shpca_" + r(HEX, 32), "SHOPIFY_CUSTOM_TOKEN", F),
        ("shopify-private-app-password", lambda: "shppa_" + r(HEX, 32), "SHOPIFY_PRIVATE_PASSWORD", F),
        ("plaid-access-token", lambda: "access-production-" + u(), "PLAID_ACCESS_TOKEN", F),
        ("plaid-secret", lambda: r(HEX, 30), "PLAID_SECRET", C),
        ("flutterwave-secret-key", lambda: "FLWSECK-" + r(HEX, 32) + "-X", "FLW_SECRET_KEY", F),
        ("razorpay-key-secret", lambda: r(ALNUM, 24), "RAZORPAY_KEY_SECRET", C),
        ("coinbase-api-secret", lambda: r(ALNUM, 32), "COINBASE_API_SECRET", C),
        ("easypost-api-key", lambda: "EZAK" + r(HEX, 54), "EASYPOST_API_KEY", F),
        ("shippo-token", lambda: "shippo_live_" + r(HEX, 40), "SHIPPO_API_TOKEN", F),
        ("duffel-token", lambda: "duffel_live_" + r(B64URL, 43), "DUFFEL_ACCESS_TOKEN", F),
        # --- chat, mail and messaging ---
        ("slack-bot-token", lambda: f"xoxb-{r(DIG, 12)}-{r(DIG, 13)}-{r(ALNUM, 24)}", "SLACK_BOT_TOKEN", F),
        (
            "slack-user-token",
            lambda: f"xoxp-{r(DIG, 12)}-{r(DIG, 12)}-{r(DIG, 13)}-{r(HEX, 32)}",
            "SLACK_USER_TOKEN",
            F,
        ),
        (
            "slack-app-token",
            lambda: f"xapp-1-A{r(UP + DIG, 10)}-{r(DIG, 13)}-{r(HEX, 64)}",
            "SLACK_APP_TOKEN",
            F,
        ),
        ("slack-config-token", lambda: f"xoxe.xoxp-1-{r(ALNUM, 160)}", "SLACK_CONFIG_TOKEN", F),
        (
            "slack-webhook",
            lambda: f"https://hooks.slack.com/services/T{r(UP + DIG, 10)}/B{r(UP + DIG, 10)}/{r(ALNUM, 24)}",
            "SLACK_WEBHOOK_URL",
            F,
        ),
        (
            "discord-webhook",
            lambda: f"https://discord.com/api/webhooks/{r(DIG, 19)}/{r(B64URL, 68)}",
            "DISCORD_WEBHOOK_URL",
            F,
        ),
        (
            "discord-bot-token",
            lambda: f"M{r(ALNUM, 25)}.{r(B64URL, 6)}.{r(B64URL, 38)}",
            "DISCORD_BOT_TOKEN",
            F,
        ),
        ("discord-client-secret", lambda: r(B64URL, 32), "DISCORD_CLIENT_SECRET", C),
        ("telegram-bot-token", lambda: f"{r(DIG, 10)}:AA{r(B64URL, 33)}", "TELEGRAM_BOT_TOKEN", F),
        ("twilio-api-key", lambda: "SK" + r(HEX, 32), "TWILIO_API_KEY", F),
        ("twilio-account-sid", lambda: "AC" + r(HEX, 32), "TWILIO_ACCOUNT_SID", F),
        ("twilio-auth-token", lambda: r(HEX, 32), "TWILIO_AUTH_TOKEN", C),
        ("sendgrid-api-key", lambda: f"SG.{r(B64URL, 22)}.{r(B64URL, 43)}", "SENDGRID_API_KEY", F),
        ("mailgun-api-key", lambda: "key-" + r(HEX, 32), "MAILGUN_API_KEY", F),
        (
            "mailgun-signing-key",
            lambda: r(HEX, 32) + "-" + r(HEX, 8) + "-" + r(HEX, 8),
            "MAILGUN_WEBHOOK_SIGNING_KEY",
            C,
        ),
        ("mailchimp-api-key", lambda: r(HEX, 32) + "-us" + r(DIG, 2), "MAILCHIMP_API_KEY", F),
        ("postmark-server-token", u, "POSTMARK_SERVER_TOKEN", C),
        ("mattermost-token", lambda: r(LO + DIG, 26), "MATTERMOST_TOKEN", C),
        (
            "teams-webhook",
            lambda: (
                f"https://harnco.webhook.office.com/webhookb2/{u()}@{u()}/IncomingWebhook/{r(HEX, 32)}/{u()}"
            ),
            "TEAMS_WEBHOOK_URL",
            F,
        ),
        ("zendesk-token", lambda: r(ALNUM, 40), "ZENDESK_API_TOKEN", C),
        ("intercom-token", lambda: "dG9rOj" + r(B64, 54) + "=", "INTERCOM_ACCESS_TOKEN", C),
        ("hubspot-private-app", lambda: "pat-na1-" + u(), "HUBSPOT_ACCESS_TOKEN", F),
        ("facebook-access-token", lambda: "EAACEdEose0cBA" + r(ALNUM, 100), "FACEBOOK_ACCESS_TOKEN", F),
        (
            "twitter-bearer-token",
            lambda: "AAAAAAAAAAAAAAAAAAAAA" + r(ALNUM + "%", 80),
            "TWITTER_BEARER_TOKEN",
            F,
        ),
        ("twitch-token", lambda: r(LO + DIG, 30), "TWITCH_ACCESS_TOKEN", C),
        # --- SaaS ---
        ("atlassian-jira-token", lambda: r(ALNUM, 24), "JIRA_API_TOKEN", C),
        ("okta-api-token", lambda: "00" + r(B64URL, 40), "OKTA_API_TOKEN", C),
        ("auth0-client-secret", lambda: r(B64URL, 64), "AUTH0_CLIENT_SECRET", C),
        ("algolia-admin-key", lambda: r(HEX, 32), "ALGOLIA_ADMIN_API_KEY", C),
        ("contentful-pat", lambda: "CFPAT-" + r(B64URL, 43), "CONTENTFUL_MANAGEMENT_TOKEN", F),
        ("figma-pat", lambda: "figd_" + r(B64URL, 40), "FIGMA_TOKEN", F),
        ("linear-api-key", lambda: "lin_api_" + r(ALNUM, 40), "LINEAR_API_KEY", F),
        ("notion-token", lambda: "ntn_" + r(DIG, 11) + r(ALNUM, 35), "NOTION_TOKEN", F),
        ("notion-legacy-secret", lambda: "secret_" + r(ALNUM, 43), "NOTION_API_KEY", F),
        ("airtable-pat", lambda: "pat" + r(ALNUM, 14) + "." + r(HEX, 64), "AIRTABLE_TOKEN", F),
        ("dropbox-token", lambda: "sl." + r(B64URL, 135), "DROPBOX_ACCESS_TOKEN", F),
        (
            "mapbox-secret-token",
            lambda: "sk.eyJ1Ijoi" + r(B64URL, 60) + "." + r(B64URL, 22),
            "MAPBOX_SECRET_TOKEN",
            F,
        ),
        ("typeform-token", lambda: "tfp_" + r(B64URL, 44) + "_" + r(B64URL, 14), "TYPEFORM_TOKEN", F),
        (
            "asana-pat",
            lambda: "2/" + r(DIG, 16) + "/" + r(DIG, 16) + ":" + r(HEX, 32),
            "ASANA_ACCESS_TOKEN",
            F,
        ),
        ("frameio-token", lambda: "fio-u-" + r(B64URL, 64), "FRAMEIO_TOKEN", F),
        ("ngrok-authtoken", lambda: r(DIG, 1) + r(ALNUM, 26) + "_" + r(ALNUM, 21), "NGROK_AUTHTOKEN", C),
        ("pinecone-api-key", lambda: "pcsk_" + r(ALNUM, 6) + "_" + r(ALNUM, 63), "PINECONE_API_KEY", F),
        # --- AI providers ---
        ("openai-api-key-legacy", lambda: "sk-" + r(ALNUM, 48), "OPENAI_API_KEY", F),
        ("openai-project-key", lambda: "sk-proj-" + r(B64URL, 156), "OPENAI_PROJECT_KEY", F),
        ("openai-service-account-key", lambda: "sk-svcacct-" + r(B64URL, 156), "OPENAI_SVC_KEY", F),
        ("openai-admin-key", lambda: "sk-admin-" + r(B64URL, 156), "OPENAI_ADMIN_KEY", F),
        ("anthropic-api-key", lambda: "sk-ant-api03-" + r(B64URL, 93) + "AA", "ANTHROPIC_API_KEY", F),
        ("anthropic-admin-key", lambda: "sk-ant-admin01-" + r(B64URL, 93) + "AA", "ANTHROPIC_ADMIN_KEY", F),
        ("huggingface-token", lambda: "hf_" + r(ALNUM, 34), "HF_TOKEN", F),
        ("huggingface-org-token", lambda: "api_org_" + r(ALNUM, 34), "HF_ORG_TOKEN", F),
        ("replicate-token", lambda: "r8_" + r(ALNUM, 37), "REPLICATE_API_TOKEN", F),
        ("groq-api-key", lambda: "gsk_" + r(ALNUM, 52), "GROQ_API_KEY", F),
        ("perplexity-api-key", lambda: "pplx-" + r(HEX, 48), "PERPLEXITY_API_KEY", F),
        ("xai-api-key", lambda: "xai-" + r(ALNUM, 80), "XAI_API_KEY", F),
        ("langsmith-api-key", lambda: "lsv2_pt_" + r(HEX, 32) + "_" + r(HEX, 10), "LANGSMITH_API_KEY", F),
        ("cohere-api-key", lambda: r(ALNUM, 40), "COHERE_API_KEY", C),
        ("mistral-api-key", lambda: r(ALNUM, 32), "MISTRAL_API_KEY", C),
        ("together-api-key", lambda: r(HEX, 64), "TOGETHER_API_KEY", C),
        ("deepseek-api-key", lambda: "sk-" + r(HEX, 32), "DEEPSEEK_API_KEY", F),
        # --- databases: DSNs with passwords ---
        ("postgres-dsn", lambda: f"postgres://app:{m(20)}@db.internal:5432/app", "DATABASE_URL", F),
        ("postgresql-dsn", lambda: f"postgresql://app:{m(18)}@10.0.0.5/app?sslmode=require", "PG_DSN", F),
        ("mysql-dsn", lambda: f"mysql://root:{m(16)}@mysql.internal:3306/shop", "MYSQL_URL", F),
        (
            "mongodb-srv-dsn",
            lambda: f"mongodb+srv://admin:{m(24)}@cluster0.ab1cd.mongodb.net/db",
            "MONGODB_URI",
            F,
        ),
        (
            "mongodb-dsn",
            lambda: f"mongodb://svc:{m(16)}@mongo-0:27017,mongo-1:27017/?replicaSet=rs0",
            "MONGO_URL",
            F,
        ),
        ("redis-dsn", lambda: f"redis://:{m(32)}@redis.internal:6379/0", "REDIS_URL", F),
        ("rediss-dsn", lambda: f"rediss://default:{m(32)}@cache.example.com:6380", "REDIS_TLS_URL", F),
        ("amqp-dsn", lambda: f"amqp://guest:{m(16)}@rabbit:5672/vhost", "AMQP_URL", F),
        (
            "mssql-connection-string",
            lambda: f"Server=tcp:sql.example.com,1433;Database=app;User ID=sa;Password={m(18)};",
            "MSSQL_CONNECTION",
            F,
        ),
        ("jdbc-password", lambda: f"jdbc:mysql://db:3306/app?user=app&password={m(18)}", "JDBC_URL", F),
        (
            "clickhouse-dsn",
            lambda: f"clickhouse://default:{m(20)}@ch.internal:9000/default",
            "CLICKHOUSE_DSN",
            F,
        ),
        (
            "https-basic-in-url",
            lambda: f"https://deploy:{m(22)}@git.example.com/org/repo.git",
            "GIT_REMOTE",
            F,
        ),
        ("db-password", lambda: m(18), "DB_PASSWORD", C),
        ("redis-password", lambda: r(HEX, 32), "REDIS_PASSWORD", C),
        # --- private keys ---
        ("rsa-private-key", lambda: g.pem("RSA PRIVATE KEY", 900), "RSA_PRIVATE_KEY", F),
        ("ec-private-key", lambda: g.pem("EC PRIVATE KEY", 120), "EC_PRIVATE_KEY", F),
        ("dsa-private-key", lambda: g.pem("DSA PRIVATE KEY", 330), "DSA_PRIVATE_KEY", F),
        ("pkcs8-private-key", lambda: g.pem("PRIVATE KEY", 600), "TLS_PRIVATE_KEY", F),
        ("encrypted-private-key", lambda: g.pem("ENCRYPTED PRIVATE KEY", 700), "ENC_PRIVATE_KEY", F),
        ("openssh-private-key", lambda: g.pem("OPENSSH PRIVATE KEY", 300), "SSH_PRIVATE_KEY", F),
        (
            "rsa-private-key-encrypted-pem",
            lambda: g.pem(
                "RSA PRIVATE KEY",
                900,
                "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC," + r(HEXU, 32) + "\n\n",
            ),
            "RSA_ENC_PRIVATE_KEY",
            F,
        ),
        (
            "pgp-private-key",
            lambda: g.pem("PGP PRIVATE KEY BLOCK", 900, "Version: GnuPG v2\n\n"),
            "PGP_PRIVATE_KEY",
            F,
        ),
        (
            "putty-private-key",
            lambda: (
                "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: harn\nPublic-Lines: 2\n"
                + g.b64(48)
                + "\nPrivate-Lines: 1\n"
                + g.b64(48)
                + "\nPrivate-MAC: "
                + r(HEX, 64)
                + "\n"
            ),
            "PUTTY_PRIVATE_KEY",
            F,
        ),
        # --- generic ---
        ("jwt-hs256", lambda: g.jwt({"sub": r(DIG, 8), "name": "Ada", "iat": 1700000000}), "SESSION_JWT", F),
        ("jwt-access-token", lambda: g.jwt({"scope": "read write", "exp": 1900000000}), "ACCESS_TOKEN", F),
        ("bearer-opaque-token", lambda: m(40, B64URL), "API_BEARER_TOKEN", C),
        (
            "basic-auth-credentials",
            lambda: base64.b64encode(f"deploy:{m(16)}".encode()).decode(),
            "BASIC_AUTH",
            C,
        ),
        ("generic-password", lambda: m(14, ALNUM + "!#%^*"), "ADMIN_PASSWORD", C),
        ("generic-client-secret", lambda: m(48), "OAUTH_CLIENT_SECRET", C),
        ("generic-hex-secret", lambda: r(HEX, 64), "APP_SECRET", C),
        ("generic-uuid-secret", u, "SERVICE_API_KEY", C),
        ("webhook-signing-secret", lambda: m(32), "WEBHOOK_SECRET", C),
        ("encryption-key-base64", lambda: g.b64(32), "ENCRYPTION_KEY", C),
        ("session-cookie", lambda: m(48, B64URL), "SESSION_COOKIE", C),
        ("hmac-key-hex", lambda: r(HEX, 40), "HMAC_SIGNING_KEY", C),
    ]


def secrets(seed: int = SEED) -> list[Secret]:
    """The credential corpus: one fake, format-valid value per format."""
    g = _Gen(seed)
    out = [Secret(name, make(), env, tell) for name, make, env, tell in _secret_specs(g)]
    names = [s.format for s in out]
    assert len(set(names)) == len(names), "format names must be unique"
    return out


# --- harmless values ------------------------------------------------------------------------

_WORDS = (
    "alpha bravo cedar delta ember falcon granite harbor indigo juniper kestrel lumen meadow "
    "nimbus orchid pepper quartz raven sierra tundra umber violet willow xenon yarrow zephyr "
    "api web worker billing search gateway ingest queue cache frontend"
).split()

_PROSE = [
    "The token expired at midnight; please sign in again.",
    "Reset your password from the account page.",
    "password: required",
    "The API key field is empty, so the request was rejected.",
    "Secret management is handled by the platform team.",
    "We rotated the credentials last week, see ticket {n}.",
    "Authorization failed for user {w} (code {n}).",
    "session expired after {n} minutes of inactivity",
    "Use `--token-file` to read the token from a file.",
    "The private key never leaves the hardware module.",
    "Found {n} results for '{w} {w2}' in 0.{n} seconds.",
    "Deployment {w}-{n} finished: {n} pods ready, 0 restarts.",
    "Temperature in {w} is {n} degrees with light wind.",
    "Build #{n} of {w}/{w2} passed on main.",
    "Invoice {n} for {w} is due on 2026-12-01.",
    "cursor: next page available",
    "The secret ingredient is patience.",
    "Your one-time code was sent to the phone ending in {n}.",
    "Call get_{w} with the city name and the number of days.",
    "See https://docs.example.com/{w}/{w2}#section-{n} for details.",
]


def _harmless_specs(g: _Gen) -> list[tuple[str, int, Callable[[int], str]]]:
    r, u = g.r, g.uuid
    w = g.rng.choice

    def ulid(_: int) -> str:
        return r("0123456789ABCDEFG", 1)[0] + r(CROCKFORD, 25)

    def sri(i: int) -> str:
        kind, n = [("sha256", 32), ("sha384", 48), ("sha512", 64)][i % 3]
        return f"{kind}-{g.b64(n)}"

    def cursor(i: int) -> str:
        payload = json.dumps({"offset": i * 50, "after": u(), "v": 2}).encode()
        return (
            base64.b64encode(payload).decode()
            if i % 2
            else base64.urlsafe_b64encode(payload).decode().rstrip("=")
        )

    def media(i: int) -> str:
        return g.b64(40 + (i * 37) % 700)

    def data_uri(i: int) -> str:
        mime = ["image/png", "image/jpeg", "image/gif", "font/woff2", "audio/ogg"][i % 5]
        return f"data:{mime};base64,{g.b64(30 + (i * 13) % 300)}"

    def ssh_pub(i: int) -> str:
        if i % 3 == 0:
            return "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + r(B64, 43) + f" {w(_WORDS)}@{w(_WORDS)}"
        if i % 3 == 1:
            return "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + r(B64, 368) + "=" + f" {w(_WORDS)}@host{i}"
        return "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB" + r(B64, 88) + "="

    def drive(i: int) -> str:
        fid = "1" + r(B64URL, 32)
        return [
            f"https://drive.google.com/file/d/{fid}/view?usp=sharing",
            f"https://docs.google.com/document/d/{fid}/edit",
            f"https://drive.google.com/open?id={fid}",
        ][i % 3]

    def tx(i: int) -> str:
        return ["0x" + r(HEX, 64), r(HEX, 64), "0x" + r(HEX, 40)][i % 3]

    def pod(i: int) -> str:
        return f"{w(_WORDS)}-{w(_WORDS)}-{r('bcdfghjklmnpqrstvwxz2456789', 10)}-{r('bcdfghjklmnpqrstvwxz2456789', 5)}"

    def git_sha(i: int) -> str:
        return r(HEX, 40) if i % 4 else r(HEX, 7)

    def path(i: int) -> str:
        return [
            f"/home/{w(_WORDS)}/projects/{w(_WORDS)}/src/{w(_WORDS)}_{i}.py",
            f"./node_modules/@{w(_WORDS)}/{w(_WORDS)}/dist/index.{r(HEX, 8)}.js",
            f"C:\\Users\\{w(_WORDS)}\\AppData\\Local\\{w(_WORDS)}\\cache\\{r(HEX, 16)}.bin",
            f"/var/lib/docker/overlay2/{r(HEX, 64)}/merged",
            f"s3://{w(_WORDS)}-bucket/exports/2026/11/{u()}.parquet",
        ][i % 5]

    def timestamp(i: int) -> str:
        day, hour, minute = 1 + i % 28, i % 24, (i * 7) % 60
        return [
            f"2026-11-{day:02d}T{hour:02d}:{minute:02d}:{i % 60:02d}Z",
            f"2026-11-{day:02d}T{hour:02d}:{minute:02d}:{i % 60:02d}.{r(DIG, 6)}+01:00",
            f"Mon, {day:02d} Nov 2026 {hour:02d}:{minute:02d}:00 GMT",
            f"{1760000000 + i * 997}",
        ][i % 4]

    def prose(i: int) -> str:
        return _PROSE[i % len(_PROSE)].format(n=r(DIG, 3), w=w(_WORDS), w2=w(_WORDS))

    def stripe_id(i: int) -> str:
        prefix = [
            "req_",
            "cus_",
            "ch_",
            "pi_",
            "in_",
            "sub_",
            "evt_",
            "pm_",
            "txn_",
            "acct_",
            "price_",
            "prod_",
        ][i % 12]
        return prefix + r(ALNUM, 14 if prefix == "req_" else 24)

    def objectid(i: int) -> str:
        return r(HEX, 24)

    def nanoid(i: int) -> str:
        return r(B64URL, 21) if i % 2 else r(B64URL, 11)

    def digest(i: int) -> str:
        return f"{w(_WORDS)}/{w(_WORDS)}@sha256:{r(HEX, 64)}" if i % 2 else f"sha256:{r(HEX, 64)}"

    def traceparent(i: int) -> str:
        return f"00-{r(HEX, 32)}-{r(HEX, 16)}-01" if i % 2 else r(HEX, 32)

    def misc_url(i: int) -> str:
        return [
            f"https://api.example.com/v2/{w(_WORDS)}?page={i}&per_page=50&sort=created",
            f"https://github.com/{w(_WORDS)}/{w(_WORDS)}/commit/{r(HEX, 40)}",
            f"https://www.youtube.com/watch?v={r(B64URL, 11)}",
            f"https://{w(_WORDS)}.s3.amazonaws.com/{u()}/photo.jpg?versionId={r(B64URL, 32)}",
            f"{w(_WORDS)}.{w(_WORDS)}@example.com",
        ][i % 5]

    def arn(i: int) -> str:
        return f"arn:aws:lambda:eu-west-1:{r(DIG, 12)}:function:{w(_WORDS)}-{w(_WORDS)}"

    def slack_id(i: int) -> str:
        return ["C", "U", "T", "W", "D"][i % 5] + r(UP + DIG, 10)

    def ksuid(i: int) -> str:
        return r(ALNUM, 27)

    def version(i: int) -> str:
        return f"{i % 9}.{(i * 3) % 40}.{i % 17}+build.{r(HEX, 7)}"

    def etag(i: int) -> str:
        return f'W/"{r(HEX, 32)}"' if i % 2 else f'"{r(HEX, 8)}-{r(B64URL, 27)}"'

    def aws_request_id(i: int) -> str:
        return ["1-" + r(HEX, 8) + "-" + r(HEX, 24), r(UP + DIG, 16), r(B64, 56)][i % 3]

    return [
        ("ulid", 180, ulid),
        ("ksuid", 150, ksuid),
        ("stripe-object-id", 240, stripe_id),
        ("sri-hash", 150, sri),
        ("base64-cursor", 150, cursor),
        ("base64-media", 120, media),
        ("data-uri", 100, data_uri),
        ("ssh-public-key", 120, ssh_pub),
        ("google-drive-url", 100, drive),
        ("blockchain-hash", 150, tx),
        ("kubernetes-pod", 150, pod),
        ("uuid", 200, lambda _i: u()),
        ("git-sha", 150, git_sha),
        ("path", 150, path),
        ("timestamp", 120, timestamp),
        ("prose", 200, prose),
        ("mongodb-objectid", 80, objectid),
        ("nanoid", 100, nanoid),
        ("image-digest", 80, digest),
        ("trace-id", 80, traceparent),
        ("url", 150, misc_url),
        ("aws-arn", 50, arn),
        ("slack-object-id", 60, slack_id),
        ("version", 50, version),
        ("etag", 60, etag),
        ("aws-request-id", 60, aws_request_id),
    ]


def harmless(seed: int = SEED) -> list[Harmless]:
    """The harmless corpus: ids, hashes, media, paths, timestamps and prose."""
    g = _Gen(seed + 1)
    return [Harmless(kind, make(i)) for kind, count, make in _harmless_specs(g) for i in range(count)]


def main(argv: list[str]) -> int:
    corpus_secrets, corpus_harmless = secrets(), harmless()
    if len(argv) == 2 and argv[0] == "--dump":
        doc = {
            "seed": SEED,
            "secrets": [asdict(s) for s in corpus_secrets],
            "harmless": [asdict(h) for h in corpus_harmless],
        }
        with open(argv[1], "w", encoding="utf-8") as out:
            json.dump(doc, out, indent=1)
    by_tell = {t: sum(1 for s in corpus_secrets if s.tell == t) for t in ("format", "context")}
    print(
        f"{len(corpus_secrets)} credential formats ({by_tell['format']} by format, {by_tell['context']} by context)"
    )
    print(f"{len(corpus_harmless)} harmless values in {len({h.kind for h in corpus_harmless})} kinds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
