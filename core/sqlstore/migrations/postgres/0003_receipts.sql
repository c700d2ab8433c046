-- 0003: receipts keep the outcome of a write applied under an idempotency key (Idempotency-Key), per account,
-- user and key, written in the write's own transaction; a retry with the key gets the outcome again.
CREATE TABLE receipts (
	account_id  BIGINT NOT NULL REFERENCES accounts(id),
	user_id     BIGINT NOT NULL,
	idem_key    TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	status      INTEGER NOT NULL,
	record_id   BIGINT NOT NULL,
	time        BIGINT NOT NULL,
	PRIMARY KEY (account_id, user_id, idem_key)
);
CREATE INDEX receipts_time ON receipts (account_id, time);
