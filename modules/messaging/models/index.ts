// The only place messaging's model files are registered.
export * from './message.js';
export * from './followers.js';
export * from './fk_message_notified_contact.js';
export * from './user.js';
export * from './mail_thread.js';
export * from './push_subscription.js';
export * from './push_outbox.js';
export * from './push_key.js';
export * from './install.js';
