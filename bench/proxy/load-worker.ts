/** One load-generator process (load.ts): runs the job it is sent and sends back the result. */
import { LoadJob, runLoad } from './load';

process.once('message', (job: LoadJob) => {
  void runLoad(job).then((result) => {
    process.send!(result, () => process.exit(0));
  });
});
