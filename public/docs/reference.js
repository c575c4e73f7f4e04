// Mounts the API reference on /docs. A file of its own, not an inline script: the page's
// Content-Security-Policy (public/_headers) runs scripts from this origin only.
//
// Every option below keeps the page self-contained, so it works offline and under that policy
// (docs/reference.md):
// - withDefaultFonts: false: no Inter from fonts.scalar.com; the system's fonts instead;
// - proxyUrl: "": "Test request" calls the API directly instead of through proxy.scalar.com
//   (Scalar's default on the web); the API is this origin, so no proxy is needed;
// - agent: { disabled: true }: no "Ask AI" agent, which Scalar enables on localhost and which
//   reads Scalar's registry (api.scalar.com, through its proxy) as soon as the page loads;
// - telemetry: false, showDeveloperTools: "never": nothing reports to Scalar, no toolbar that
//   links to its hosted services when the page is served from localhost.
globalThis.Scalar.createApiReference("#reference", {
  url: "/openapi.json",
  withDefaultFonts: false,
  proxyUrl: "",
  telemetry: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
});
