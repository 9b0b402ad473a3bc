// The only place core's model files are registered.
export * from './module.js';
export * from './company.js';
export * from './user.js';
export * from './group.js';
export * from './model-access.js';
export * from './ui-view.js';
export * from './window-action.js';
export * from './ui-menu.js';
export * from './settings.js';
export * from './service-account.js';
export * from './api-key.js';
