/**
 * A Status List Token as `GET /v1/status-lists/{id}` answers it (ES256; header
 * `{"alg":"ES256","kid":…,"typ":"statuslist+jwt"}`, claims `iss`, `sub`, `iat`, `exp`, `ttl`,
 * `status_list {bits: 2, lst}`), an empty list of 65,536 places; the signature is illustrative.
 */
export const STATUS_LIST_EXAMPLE =
  "eyJhbGciOiJFUzI1NiIsImtpZCI6InE1aE44RjJ2SjBtNFh5VmJUN2NSMXVXOXNMa0UzYUdkUG82aVpuSHRReEEiLCJ0eXAiOiJzdGF0dXNsaXN0K2p3dCJ9" +
  ".eyJpc3MiOiJodHRwczovL2FwaS5leGFtcGxlLmNvbSIsInN1YiI6Imh0dHBzOi8vYXBpLmV4YW1wbGUuY29tL3YxL3N0YXR1cy1saXN0cy8wMTkwZjFjMi03ZDNlLTdhNDEtOWM1NS0yYjhlNGY2YTFkMjAuMCIsImlhdCI6MTc4MDAwMDAwMCwiZXhwIjoxNzgwMDAzNjAwLCJ0dGwiOjYwLCJzdGF0dXNfbGlzdCI6eyJiaXRzIjoyLCJsc3QiOiJlTnJ0d1RFQkFBQUF3cUQxVDIwTUg2QUFBQUFBQUFBQUFBQUFBQUFBQUFDQXR3RkFBQUFCIn19" +
  ".BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBw";
