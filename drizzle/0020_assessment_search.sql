-- The search and filters of GET /v1/assessments (docs/assess.md, "Listing assessments"): the
-- payee id in keyset order, payee and agent names by prefix (text_pattern_ops, any collation, no
-- trigram extension), the transaction id, the amount and score ranges.
CREATE INDEX "assessments_payee_idx" ON "assessments" USING btree ("org_id","livemode",("inputs" #>> '{facts,payee,id}'),"id") WHERE ("assessments"."inputs" #>> '{facts,payee,id}') is not null;--> statement-breakpoint
CREATE INDEX "assessments_payee_name_idx" ON "assessments" USING btree ("org_id",lower("inputs" #>> '{facts,payee,name}') text_pattern_ops) WHERE ("assessments"."inputs" #>> '{facts,payee,name}') is not null;--> statement-breakpoint
CREATE INDEX "assessments_transaction_idx" ON "assessments" USING btree ("org_id",("inputs" #>> '{facts,transactionId}')) WHERE ("assessments"."inputs" #>> '{facts,transactionId}') is not null;--> statement-breakpoint
CREATE INDEX "assessments_amount_idx" ON "assessments" USING btree ("org_id","livemode","currency","amount");--> statement-breakpoint
CREATE INDEX "assessments_score_idx" ON "assessments" USING btree ("org_id","livemode","risk_score","id");--> statement-breakpoint
CREATE INDEX "agents_name_idx" ON "agents" USING btree ("org_id",lower("name") text_pattern_ops);