import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../helpers/run-cli';

/** Folders of `test/` beside `modules/`: each mirrors something other than one area. */
const OTHER_TEST_FOLDERS = ['architecture', 'demo', 'e2e', 'examples', 'fixtures', 'helpers', 'modules', 'plugins', 'scripts'];

describe('architecture: tests mirror src/', () => {
  it('a module of src/modules/<area>/ has its tests under test/modules/<area>/, and nowhere else', () => {
    const areas = fs.readdirSync(path.join(REPO_ROOT, 'src', 'modules'));
    const testAreas = fs.readdirSync(path.join(REPO_ROOT, 'test', 'modules'));
    expect(testAreas.filter((a) => !areas.includes(a)), 'test/modules folders without an area').to.deep.equal([]);
    const topLevel = fs.readdirSync(path.join(REPO_ROOT, 'test'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(topLevel.filter((d) => !OTHER_TEST_FOLDERS.includes(d)), 'test/ folders outside the layout').to.deep.equal([]);
  });
});
