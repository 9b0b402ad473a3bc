// The only place live chat's model files are registered.
export * from './livechat_session.js';
export * from './message.js';
