/**
 * Route pattern → page. One line per page, so the pages' authors each add their own; `:name`
 * matches one segment, handed to the page in order as `params`.
 */
import { AssessmentPage } from "./pages/assessment";
import { AssessmentsPage } from "./pages/assessments";
import { AuditPage } from "./pages/audit";
import { OverviewPage } from "./pages/overview";
import { ReviewsPage } from "./pages/reviews";
import type { Page } from "./router";

export const routes: Record<string, Page> = {
  "": OverviewPage,
  assessments: AssessmentsPage,
  "assessments/:id": AssessmentPage,
  reviews: ReviewsPage,
  audit: AuditPage,
};
