export function OverviewPage(_: { params: string[] }) {
  return <h1>Overview</h1>;
}
