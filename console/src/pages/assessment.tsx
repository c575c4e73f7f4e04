export function AssessmentPage(_: { params: string[] }) {
  return <h1>Assessment</h1>;
}
