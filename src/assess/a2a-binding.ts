import { ApiError } from "../errors";
import { A2A_VERSIONS, type A2ABinding, type A2AVersion } from "../schemas/assessments";

// The A2A binding of an assessment request (docs/assess.md, "Validation"): the version it speaks
// and the task, context and Agent Card it names, from the `A2A-Version` header and `a2a` block.

export { A2A_VERSIONS, A2ABinding, type A2AVersion } from "../schemas/assessments";

/** What A2A assumes when no version is stated (A2A spec: an empty `A2A-Version` means 0.3). */
export const A2A_DEFAULT_VERSION: A2AVersion = "0.3";

/** The request's `a2a` block, as its schema (request.ts) let it through. */
export interface A2ABlock {
  task_id?: string | undefined;
  context_id?: string | undefined;
  agent_card_ref?: string | undefined;
  a2a_version?: string | undefined;
}

/**
 * A2A is engaged by a non-empty `A2A-Version` header or by an `a2a` block. An empty header
 * counts as absent: A2A reads an empty header exactly as a missing one (version 0.3), and a
 * missing one does not engage A2A here. A version is Major.Minor; a patch part ("0.3.0", as
 * Agent Cards write `protocolVersion`) is accepted and dropped, since A2A versions
 * compatibility by Major.Minor. A block without a version and without a header gets 0.3.
 */
export function a2aBinding(block: A2ABlock | undefined, header: string | null): A2ABinding | null {
  const headerText = header?.trim() || undefined;
  const blockText = block?.a2a_version?.trim() || undefined;
  if (headerText === undefined && block === undefined) return null;
  const fromHeader = headerText === undefined ? null : supportedVersion(headerText, "a2a-version");
  const fromBlock = blockText === undefined ? null : supportedVersion(blockText, "a2a.a2a_version");
  if (fromHeader !== null && fromBlock !== null && fromHeader !== fromBlock) {
    throw new ApiError("a2a_version_mismatch", [
      {
        path: "a2a.a2a_version",
        message: `is ${fromBlock}, but the A2A-Version header says ${fromHeader}`,
      },
    ]);
  }
  return {
    version: fromHeader ?? fromBlock ?? A2A_DEFAULT_VERSION,
    task_id: block?.task_id ?? null,
    context_id: block?.context_id ?? null,
    agent_card_ref: block?.agent_card_ref ?? null,
  };
}

const VERSION = /^(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})(?:\.(?:0|[1-9]\d{0,3}))?$/;

function supportedVersion(text: string, path: string): A2AVersion {
  const match = VERSION.exec(text);
  const majorMinor = match ? `${match[1]}.${match[2]}` : null;
  const supported = A2A_VERSIONS.find((version) => version === majorMinor);
  if (supported === undefined) {
    // The value is not echoed: a header can be long, and it is the caller's own input.
    throw new ApiError("unsupported_a2a_version", [
      { path, message: `must be one of ${A2A_VERSIONS.join(", ")} (Major.Minor)` },
    ]);
  }
  return supported;
}
