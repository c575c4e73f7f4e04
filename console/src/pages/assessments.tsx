export function AssessmentsPage(_: { params: string[] }) {
  return <h1>Assessments</h1>;
}
