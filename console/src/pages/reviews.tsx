export function ReviewsPage(_: { params: string[] }) {
  return <h1>Reviews</h1>;
}
