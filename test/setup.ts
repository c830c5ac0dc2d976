// Loaded by mocha before every test file (see .mocharc.yml).
import 'reflect-metadata';
