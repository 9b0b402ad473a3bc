// The only place contacts' model files are registered.
export * from './contact_tag.js';
export * from './contact.js';
