export { AddOn, ADDONS, MESHD_DEBUG } from './addons';
export { dashboardPod, DashboardFlags, openDashboard, PodChoice } from './open-dashboard';
