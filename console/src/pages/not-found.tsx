import { href } from "../router";

export function NotFoundPage(_: { params: string[] }) {
  return (
    <>
      <h1>Page not found</h1>
      <p>
        The console has no page at this address. <a href={href("")}>Go to the overview</a>.
      </p>
    </>
  );
}
