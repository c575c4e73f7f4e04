"""Runs the AP2 SDK's own receipt verification on a Mandate Receipt of this service.

Usage (docs/credentials.md, "Checked by the SDK's own code"):
  PYTHONPATH=<AP2 checkout>/code/sdk/python python3 verify-mandate-receipt.py IN.json

It needs what the SDK imports for receipts: pydantic, cryptography and jwcrypto (Debian:
python3-pydantic, python3-cryptography, python3-jwcrypto). IN.json holds {credential, receipt,
jwks}: the presented chain, the receipt POST /v1/assess answered, the service's
/.well-known/jwks.json. Prints, as JSON, what the SDK answered:
  - `verify_jwt`: `ap2.sdk.jwt_helper.verify_jwt` (jwcrypto, ES256), the signature step of
    `ReceiptClient.verify_receipt`, under the key set's ES256 key: the payload.
  - `verify_receipt`: `ReceiptClient.verify_receipt` itself, same key, with a store that knows
    the chain's closed mandate by the SDK's canonical reference, as a payment and as a checkout
    receipt.
  - `canonical_reference`: compute_sha256_b64url(MandateClient.get_closed_mandate_jwt(chain)),
    the method's body taken from the SDK's source (the class imports the sd_jwt package, which
    only its other methods need).
"""

import ast
import json
import pathlib
import sys

import ap2.sdk
from ap2.sdk.jwt_helper import verify_jwt
from ap2.sdk.receipt_wrapper import ReceiptClient
from ap2.sdk.utils import compute_sha256_b64url
from jwcrypto.jwk import JWK


def get_closed_mandate_jwt():
    source = (pathlib.Path(ap2.sdk.__file__).parent / "mandate.py").read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == "get_closed_mandate_jwt":
            scope = {}
            exec(compile(ast.Module(body=[node], type_ignores=[]), "mandate.py", "exec"), scope)
            return lambda token: scope["get_closed_mandate_jwt"](None, token)
    raise SystemExit("get_closed_mandate_jwt not found in the SDK")


def main(path):
    given = json.loads(pathlib.Path(path).read_text())
    es256 = next(k for k in given["jwks"]["keys"] if k["alg"] == "ES256")
    key = JWK(**{m: es256[m] for m in ("kty", "crv", "x", "y")})
    canonical = compute_sha256_b64url(get_closed_mandate_jwt()(given["credential"]))
    known = lambda reference: reference in (canonical,)  # noqa: E731
    client = ReceiptClient()
    print(
        json.dumps(
            {
                "verify_jwt": verify_jwt(given["receipt"], key),
                "canonical_reference": canonical,
                "verify_receipt": {
                    "payment": client.verify_receipt(given["receipt"], key, known, True),
                    "checkout": client.verify_receipt(given["receipt"], key, known, False),
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
