/**
 * A Status List Token as `GET /v1/status-lists/{id}` answers it (EdDSA; header
 * `{"alg":"EdDSA","kid":…,"typ":"statuslist+jwt"}`, claims `iss`, `sub`, `iat`, `exp`, `ttl`,
 * `status_list {bits: 2, lst}`), shortened: the signature is illustrative.
 */
export const STATUS_LIST_EXAMPLE =
  "eyJhbGciOiJFZERTQSIsImtpZCI6Im5MM3pGYlZhOU9qZ2JwbUh3Q2hSaW9Ub1prOTFzWGtVU3pNNDNIR3FqdUkiLCJ0eXAiOiJzdGF0dXNsaXN0K2p3dCJ9" +
  ".eyJpc3MiOiJodHRwczovL2FwaS5leGFtcGxlLmNvbSIsInN1YiI6Imh0dHBzOi8vYXBpLmV4YW1wbGUuY29tL3YxL3N0YXR1cy1saXN0cy8wMTkwZjFjMi03ZDNlLTdhNDEtOWM1NS0yYjhlNGY2YTFkMjAuMCIsImlhdCI6MTc4MDAwMDAwMCwiZXhwIjoxNzgwMDAzNjAwLCJ0dGwiOjYwLCJzdGF0dXNfbGlzdCI6eyJiaXRzIjoyLCJsc3QiOiJlTnJ0d1RFQkFBQUF3cUQxVDIwTUlBQUFBT0Jody1BQUFRIn19" +
  ".c2lnbmF0dXJlLWlzLWlsbHVzdHJhdGl2ZQ";
