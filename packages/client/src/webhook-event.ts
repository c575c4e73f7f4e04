/** The data of the assessment events (`assessment.completed`, `.denied`, `.flagged`). */
export interface AssessmentEventData {
  assessment_id: string;
  decision: "approve" | "review" | "deny";
  risk_level: string;
  risk_score: number;
  agent_id: string | null;
  kind: string;
}

/** The data of the agent events (`agent.trust_changed`, `.suspended`, `.revoked`). */
export interface AgentEventData {
  agent_id: string;
  principal_id: string;
  status: string;
  trust_score: number;
  risk_tier: string;
  previous_score: number | null;
  previous_tier: string | null;
  reason: string;
}

export interface KeyRotationEventData {
  kid: string;
  previous_kid: string | null;
  rotated_at: string;
}

interface EventOf<Type extends string, Data> {
  /** The delivery's id: the same on every retry; dedupe on it. */
  id: string;
  type: Type;
  /** When the event happened, Unix seconds. */
  created: number;
  livemode: boolean;
  data: Data;
}

/** A webhook delivery's body (docs/webhooks.md, "Events"). */
export type WebhookEvent =
  | EventOf<
      "assessment.completed" | "assessment.denied" | "assessment.flagged",
      AssessmentEventData
    >
  | EventOf<"agent.trust_changed" | "agent.suspended" | "agent.revoked", AgentEventData>
  | EventOf<"audit.integrity_alert", { reason: string; [detail: string]: unknown }>
  | EventOf<"key.rotation", KeyRotationEventData>
  | EventOf<"spend.review_required" | "spend.denied" | "spend.confirmed", Record<string, unknown>>;

export type WebhookEventType = WebhookEvent["type"];
