// The only place core's model files are registered.
export * from './module.js';
export * from './company.js';
export * from './user.js';
export * from './group.js';
export * from './model_access.js';
export * from './ui_view.js';
export * from './window_action.js';
export * from './ui_menu.js';
export * from './settings.js';
export * from './service_account.js';
export * from './api_key.js';
export * from './record_rule.js';
export * from './auth_session.js';
export * from './uom.js';
export * from './currency.js';
export * from './attachment.js';
