export { serveDashboard, listenPreferring, ServedForward, ServeOptions } from './serve';
export { dashboardPod, DashboardPodOptions, PodLookup } from './dashboard-pod';
