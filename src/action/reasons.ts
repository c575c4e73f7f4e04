import type { ReasonCode } from "../schemas/vocabulary";

export interface Reason {
  code: ReasonCode;
  message: string;
}
