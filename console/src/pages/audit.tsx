export function AuditPage(_: { params: string[] }) {
  return <h1>Audit</h1>;
}
