"""A secret in a Markdown table row whose first cell names it (``table-row``, issue 37), as
READMEs and runbooks list settings with their values.

Values are generated with a fixed seed at import. The value cell goes; descriptions, types,
defaults, rows under names that are no secret's and header rows stay.
"""

from __future__ import annotations

import random
import string

from harn_mcp_mock.redact import RedactionPolicy

RNG = random.Random(37_0040)
ALNUM = string.ascii_letters + string.digits


def pick(alphabet: str, n: int) -> str:
    out = [RNG.choice(alphabet) for _ in range(n)]
    out[1], out[n // 2], out[-2] = RNG.choice(string.digits), RNG.choice(string.ascii_uppercase), "q"
    return "".join(out)


REFRESH = "0." + pick(ALNUM + "_-", 40) + "." + pick(ALNUM + "_-", 120)
API_KEY = pick(ALNUM, 32)
TABLE = """| Variable name   | Description                    | Example value |
| --------------- | ------------------------------ | ------------- |
| AFASBaseUri     | Base URI of the REST API       | https://12345.rest.example.org/ProfitRestServices |
| AADtenantID     | Id of the Azure tenant         | 12fc345b-0c67-4cde-8902-dabf2cad34b5 |
| AADRefreshToken | Refresh token of the Azure app | {refresh}
| `API_KEY`       | Your key for the API           | `{key}` |
| TIMEOUT         | How long to wait               | 30s |
| token_type      | The kind of token              | Bearer |
| PASSWORD        | The admin password             | string |
"""


def test_the_value_cell_under_a_secrets_name_goes_and_the_rest_of_the_table_stays() -> None:
    text = TABLE.format(refresh=REFRESH, key=API_KEY)
    out = RedactionPolicy.default().redactor(argv=["srv"], env={}).redact_text(text)
    assert out == TABLE.format(refresh="[REDACTED:1]", key="[REDACTED:2]"), out


def test_a_row_without_a_secrets_name_or_a_pipe_inside_a_cell_is_no_value() -> None:
    kept = [
        f"| request_id | {pick(ALNUM, 24)} |",
        f"echo {pick(ALNUM, 24)} | tee token.txt",
        f"| API_KEY \\| {pick(ALNUM, 24)}",
        "| PASSWORD | required |",
    ]
    red = RedactionPolicy.default().redactor(argv=["srv"], env={})
    for line in kept:
        assert red.redact_text(line) == line, line
