// The only place project's model files are registered.
export * from './project_stage.js';
export * from './project_tag.js';
export * from './project_project.js';
export * from './project_task.js';
