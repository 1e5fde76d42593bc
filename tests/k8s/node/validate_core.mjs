// Validates pstrain's core Kubernetes objects (batch/v1 Job, v1 PersistentVolumeClaim, v1 PersistentVolume)
// offline with the kubernetes-models package (the Kubernetes OpenAPI schemas, via ajv).
//
//   node validate_core.mjs FILE...              every Job/PVC/PV/ConfigMap in FILE (multi-document YAML) must be valid;
//                                               other kinds (MPIJob) are skipped; a FILE with none is an error
//   node validate_core.mjs --self-test FILE...  additionally, broken copies of each object must be rejected
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { Job } from "kubernetes-models/batch/v1/Job";
import { PersistentVolumeClaim } from "kubernetes-models/v1/PersistentVolumeClaim";
import { PersistentVolume } from "kubernetes-models/v1/PersistentVolume";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";

const models = {
  "batch/v1/Job": Job,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
  "v1/PersistentVolume": PersistentVolume,
  "v1/ConfigMap": ConfigMap,  // the elastic overlay's discovery script
};
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i?|[mkMGTPE]|u|n)?$/;
const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

// Problems kubernetes-models does not see but the API server rejects.
function extraChecks(obj) {
  const errors = [];
  const name = obj.metadata?.name ?? "";
  if (!NAME.test(name) || name.length > 253) errors.push(`metadata.name ${JSON.stringify(name)} is not a DNS-1123 name`);
  const quantities = [];
  if (obj.kind === "PersistentVolumeClaim") {
    if (!obj.spec?.accessModes?.length) errors.push("spec.accessModes is empty");
    const storage = obj.spec?.resources?.requests?.storage;
    if (storage === undefined) errors.push("spec.resources.requests.storage is missing");
    else quantities.push(["spec.resources.requests.storage", storage]);
  }
  if (obj.kind === "PersistentVolume") {
    if (!obj.spec?.accessModes?.length) errors.push("spec.accessModes is empty");
    const storage = obj.spec?.capacity?.storage;
    if (storage === undefined) errors.push("spec.capacity.storage is missing");
    else quantities.push(["spec.capacity.storage", storage]);
  }
  if (obj.kind === "Job") {
    const pod = obj.spec?.template?.spec ?? {};
    if (!["Never", "OnFailure"].includes(pod.restartPolicy)) {
      errors.push(`Job pods need restartPolicy Never or OnFailure, not ${JSON.stringify(pod.restartPolicy)}`);
    }
    const volumes = new Set((pod.volumes ?? []).map((v) => v.name));
    for (const c of pod.containers ?? []) {
      for (const m of c.volumeMounts ?? []) {
        if (!volumes.has(m.name)) errors.push(`container ${c.name} mounts undefined volume ${m.name}`);
      }
      for (const kind of ["requests", "limits"]) {
        for (const [k, v] of Object.entries(c.resources?.[kind] ?? {})) quantities.push([`${c.name}.${kind}.${k}`, v]);
      }
    }
  }
  for (const [where, q] of quantities) {
    if (!QUANTITY.test(String(q))) errors.push(`${where} ${JSON.stringify(q)} is not a quantity`);
  }
  return errors;
}

function validate(obj) {
  const Model = models[`${obj.apiVersion}/${obj.kind}`];
  if (!Model) return [`no model for ${obj.apiVersion} ${obj.kind}`];
  const errors = [];
  try {
    new Model(obj).validate();
  } catch (e) {
    errors.push(`kubernetes-models: ${e.message}`);
  }
  return errors.concat(extraChecks(obj));
}

function brokenCopies(obj) {
  const copy = () => structuredClone(obj);
  const cases = [];
  const add = (desc, mutate) => { const o = copy(); mutate(o); cases.push([desc, o]); };
  add("metadata.name with upper case and _", (o) => { o.metadata.name = "Bad_Name"; });
  if (obj.kind === "Job") {
    add("container without name", (o) => { delete o.spec.template.spec.containers[0].name; });
    add("args as a string", (o) => { o.spec.template.spec.containers[0].args = "fashion-mnist --input"; });
    add("restartPolicy Always", (o) => { o.spec.template.spec.restartPolicy = "Always"; });
    add("backoffLimit as text", (o) => { o.spec.backoffLimit = "two"; });
    add("mount of an undefined volume", (o) => { o.spec.template.spec.volumes = []; });
  } else {
    add("accessModes as a string", (o) => { o.spec.accessModes = "ReadWriteMany"; });
    add("no accessModes", (o) => { delete o.spec.accessModes; });
    if (obj.kind === "PersistentVolumeClaim") add("storage 2 gigs", (o) => { o.spec.resources.requests.storage = "2 gigs"; });
    else add("nfs without server", (o) => { delete o.spec.nfs.server; });
  }
  return cases;
}

const args = process.argv.slice(2);
const selfTest = args[0] === "--self-test";
const files = selfTest ? args.slice(1) : args;
if (!files.length) { console.error("usage: node validate_core.mjs [--self-test] FILE..."); process.exit(2); }
let failed = false;
for (const file of files) {
  const text = readFileSync(file === "-" ? 0 : file, "utf8");
  let found = 0;
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) { console.error(`${file}: YAML: ${doc.errors[0].message}`); failed = true; continue; }
    const obj = doc.toJS();
    if (!obj || typeof obj !== "object" || !models[`${obj.apiVersion}/${obj.kind}`]) continue;
    found++;
    const where = `${file}: ${obj.kind} ${obj.metadata?.name}`;
    const errors = validate(obj);
    for (const e of errors) console.error(`${where}: ${e}`);
    if (errors.length) failed = true; else console.log(`${where}: valid`);
    if (selfTest) {
      for (const [desc, broken] of brokenCopies(obj)) {
        const errs = validate(broken);
        if (errs.length) console.log(`${where}: broken copy (${desc}) rejected: ${errs[0].split("\n")[0]}`);
        else { console.error(`${where}: broken copy (${desc}) was ACCEPTED`); failed = true; }
      }
    }
  }
  if (!found) { console.error(`${file}: no Job, PersistentVolumeClaim or PersistentVolume found`); failed = true; }
}
process.exit(failed ? 1 : 0);
