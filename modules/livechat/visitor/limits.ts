/**
 * What one anonymous visitor may send (issue 28 item 2), read from the environment at each check so
 * an operator's change (or a test's) applies at once; a malformed value is refused loudly:
 *
 * * `FF_LIVECHAT_MESSAGES_PER_MINUTE` (60): messages and files of one session in any minute — a
 *   person typing fast sends one every few seconds, a script hundreds;
 * * `FF_LIVECHAT_MAX_MESSAGE_CHARS` (5,000): characters of one message (a long paragraph);
 * * `FF_LIVECHAT_MAX_FILE_BYTES` (10 MiB, and never above `FF_UPLOAD_LIMIT`): one file's bytes;
 * * `FF_LIVECHAT_FILES_PER_HOUR` (20): files of one session in any hour.
 */
export interface VisitorLimits {
  messagesPerMinute: number;
  maxMessageChars: number;
  maxFileBytes: number;
  filesPerHour: number;
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, got '${raw}'`);
  return value;
}

export function visitorLimits(): VisitorLimits {
  return {
    messagesPerMinute: positive('FF_LIVECHAT_MESSAGES_PER_MINUTE', 60),
    maxMessageChars: positive('FF_LIVECHAT_MAX_MESSAGE_CHARS', 5_000),
    maxFileBytes: positive('FF_LIVECHAT_MAX_FILE_BYTES', 10 * 1024 * 1024),
    filesPerHour: positive('FF_LIVECHAT_FILES_PER_HOUR', 20),
  };
}
