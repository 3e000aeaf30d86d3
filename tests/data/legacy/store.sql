BEGIN TRANSACTION;
CREATE TABLE cases (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  workload TEXT NOT NULL,
  params_json TEXT NOT NULL DEFAULT '{}',
  params_key TEXT NOT NULL DEFAULT '',
  label TEXT NOT NULL DEFAULT '',
  backend TEXT NOT NULL DEFAULT '',
  comm TEXT NOT NULL DEFAULT '',
  ranks INTEGER NOT NULL DEFAULT 1,
  status TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  primary_metric TEXT NOT NULL DEFAULT '',
  started_at REAL NOT NULL DEFAULT 0,
  finished_at REAL NOT NULL DEFAULT 0
, gpu_json TEXT NOT NULL DEFAULT '{}', throttled INTEGER NOT NULL DEFAULT 0);
INSERT INTO "cases" VALUES(1,1,'compress','{"algorithm":"auto","block":128,"codec":"none","collective":"allreduce","density":0.01,"distribution":"gaussian","dtype":"auto","elements":65536,"error_budget":0.01,"error_feedback":1,"level":1,"link_gbps":0.0,"mode":"codec","model":"gpt2-small","rank":4,"scale":16,"sigma":0.02,"tensor":"all","tensor_file":"none","threads":1}','algorithm=auto,block=128,codec=none,collective=allreduce,density=0.01,distribution=gaussian,dtype=auto,elements=65536,error_budget=0.01,error_feedback=1,level=1,link_gbps=0,mode=codec,model=gpt2-small,rank=4,scale=16,sigma=0.02,tensor=all,tensor_file=none,threads=1','codec=none,elements=65536','cpu','local',1,'ok','noisy: relative stddev of time_ms is 87.08% after 2 samples (bound 5.00%)','time_ms',1.79635737859939455989e+09,1.79635737863438415531e+09,'{}',0);
INSERT INTO "cases" VALUES(2,1,'compress','{"algorithm":"auto","block":128,"codec":"zstd","collective":"allreduce","density":0.01,"distribution":"gaussian","dtype":"auto","elements":65536,"error_budget":0.01,"error_feedback":1,"level":1,"link_gbps":0.0,"mode":"codec","model":"gpt2-small","rank":4,"scale":16,"sigma":0.02,"tensor":"all","tensor_file":"none","threads":1}','algorithm=auto,block=128,codec=zstd,collective=allreduce,density=0.01,distribution=gaussian,dtype=auto,elements=65536,error_budget=0.01,error_feedback=1,level=1,link_gbps=0,mode=codec,model=gpt2-small,rank=4,scale=16,sigma=0.02,tensor=all,tensor_file=none,threads=1','codec=zstd,elements=65536','cpu','local',1,'ok','noisy: relative stddev of time_ms is 103.29% after 2 samples (bound 5.00%)','time_ms',1.79635737863589072232e+09,1.79635737865198111531e+09,'{}',0);
INSERT INTO "cases" VALUES(3,1,'compress','{"algorithm":"auto","block":128,"codec":"none","collective":"allreduce","density":0.01,"distribution":"gaussian","dtype":"auto","elements":4096,"error_budget":0.01,"error_feedback":1,"level":1,"link_gbps":0.0,"mode":"collective","model":"gpt2-small","rank":4,"scale":16,"sigma":0.02,"tensor":"all","tensor_file":"none","threads":1}','algorithm=auto,block=128,codec=none,collective=allreduce,density=0.01,distribution=gaussian,dtype=auto,elements=4096,error_budget=0.01,error_feedback=1,level=1,link_gbps=0,mode=collective,model=gpt2-small,rank=4,scale=16,sigma=0.02,tensor=all,tensor_file=none,threads=1','codec=none,elements=4096,mode=collective','cpu','local',1,'ok','noisy: relative stddev of time_ms is 18.13% after 2 samples (bound 5.00%)','time_ms',1.79635737865323615071e+09,1.79635737865644717218e+09,'{}',0);
INSERT INTO "cases" VALUES(4,1,'compress','{"algorithm":"auto","block":128,"codec":"exponent","collective":"allreduce","density":0.01,"distribution":"gaussian","dtype":"auto","elements":4194304,"error_budget":0.01,"error_feedback":1,"level":1,"link_gbps":12.5,"mode":"plan","model":"gpt2-small","rank":4,"scale":64,"sigma":0.02,"tensor":"all","tensor_file":"none","threads":1}','algorithm=auto,block=128,codec=exponent,collective=allreduce,density=0.01,distribution=gaussian,dtype=auto,elements=4194304,error_budget=0.01,error_feedback=1,level=1,link_gbps=12.5,mode=plan,model=gpt2-small,rank=4,scale=64,sigma=0.02,tensor=all,tensor_file=none,threads=1','link_gbps=12.5,mode=plan,scale=64','cpu','local',1,'ok','','time_ms',1.79635737865748858449e+09,1.79635737873648309703e+09,'{}',0);
INSERT INTO "cases" VALUES(5,1,'moe_train','{"aux_coef":0.01,"batch":16,"bias_rate":0.001,"capacity_factor":0.0,"corpus":"system","corpus_mb":4.0,"drop_policy":"probs","dtype":"auto","experts":4,"ffn":32,"group_topk":1,"groups":1,"heads":4,"hidden":32,"layers":2,"lr":0.003,"mode":"layer","optimizer":1,"preset":"custom","router":"topk_softmax","scale":1,"seq":64,"shared_experts":0,"shared_ffn":0,"steps":300,"threads":1,"tokens":64,"topk":2,"trace_eval":0,"trace_every":10,"trace_out":"none","z_coef":0.001}','aux_coef=0.01,batch=16,bias_rate=0.001,capacity_factor=0,corpus=system,corpus_mb=4,drop_policy=probs,dtype=auto,experts=4,ffn=32,group_topk=1,groups=1,heads=4,hidden=32,layers=2,lr=0.003,mode=layer,optimizer=1,preset=custom,router=topk_softmax,scale=1,seq=64,shared_experts=0,shared_ffn=0,steps=300,threads=1,tokens=64,topk=2,trace_eval=0,trace_every=10,trace_out=none,z_coef=0.001','experts=4,ffn=32,hidden=32,tokens=64','cpu','local',1,'ok','noisy: relative stddev of step_ms is 38.54% after 2 samples (bound 3.00%)','step_ms',1.79635737873831152918e+09,1.79635738086710381507e+09,'{}',0);
INSERT INTO "cases" VALUES(6,1,'moe_train','{"aux_coef":0.01,"batch":2,"bias_rate":0.001,"capacity_factor":0.0,"corpus":"system","corpus_mb":0.1,"drop_policy":"probs","dtype":"auto","experts":4,"ffn":16,"group_topk":1,"groups":1,"heads":4,"hidden":16,"layers":2,"lr":0.003,"mode":"lm","optimizer":1,"preset":"custom","router":"topk_softmax","scale":1,"seq":16,"shared_experts":0,"shared_ffn":0,"steps":5,"threads":1,"tokens":2048,"topk":2,"trace_eval":0,"trace_every":10,"trace_out":"none","z_coef":0.001}','aux_coef=0.01,batch=2,bias_rate=0.001,capacity_factor=0,corpus=system,corpus_mb=0.1,drop_policy=probs,dtype=auto,experts=4,ffn=16,group_topk=1,groups=1,heads=4,hidden=16,layers=2,lr=0.003,mode=lm,optimizer=1,preset=custom,router=topk_softmax,scale=1,seq=16,shared_experts=0,shared_ffn=0,steps=5,threads=1,tokens=2048,topk=2,trace_eval=0,trace_every=10,trace_out=none,z_coef=0.001','batch=2,corpus_mb=0.1,experts=4,ffn=16,hidden=16,mode=lm,seq=16,steps=5','cpu','local',1,'ok','warning: steps: fewer than 20 steps; the loss curve is not checked','step_ms',1.79635738087013077735e+09,1.79635738090001511571e+09,'{}',0);
CREATE TABLE items (
  id INTEGER PRIMARY KEY,
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  json TEXT NOT NULL
);
INSERT INTO "items" VALUES(1,1,'group','{"name":"lossless codecs"}');
INSERT INTO "items" VALUES(2,2,'group','{"name":"lossless codecs"}');
INSERT INTO "items" VALUES(3,4,'tensor/wte','{"codec":"none","density":1.0,"elements":9420,"predicted_ms":0.0015072,"ratio":1.0,"rel_error":0.0,"tensor":"wte","uncompressed_ms":0.0015072}');
INSERT INTO "items" VALUES(4,4,'tensor/layers.0.attn.c_attn','{"codec":"none","density":1.0,"elements":432,"predicted_ms":6.912e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.0.attn.c_attn","uncompressed_ms":6.912e-05}');
INSERT INTO "items" VALUES(5,4,'tensor/layers.0.attn.c_proj','{"codec":"none","density":1.0,"elements":144,"predicted_ms":2.304e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.0.attn.c_proj","uncompressed_ms":2.304e-05}');
INSERT INTO "items" VALUES(6,4,'tensor/layers.0.mlp.c_fc','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.0.mlp.c_fc","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(7,4,'tensor/layers.0.mlp.c_proj','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.0.mlp.c_proj","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(8,4,'tensor/layers.1.attn.c_attn','{"codec":"none","density":1.0,"elements":432,"predicted_ms":6.912e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.1.attn.c_attn","uncompressed_ms":6.912e-05}');
INSERT INTO "items" VALUES(9,4,'tensor/layers.1.attn.c_proj','{"codec":"none","density":1.0,"elements":144,"predicted_ms":2.304e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.1.attn.c_proj","uncompressed_ms":2.304e-05}');
INSERT INTO "items" VALUES(10,4,'tensor/layers.1.mlp.c_fc','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.1.mlp.c_fc","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(11,4,'tensor/layers.1.mlp.c_proj','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.1.mlp.c_proj","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(12,4,'tensor/layers.2.attn.c_attn','{"codec":"none","density":1.0,"elements":432,"predicted_ms":6.912e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.2.attn.c_attn","uncompressed_ms":6.912e-05}');
INSERT INTO "items" VALUES(13,4,'tensor/layers.2.attn.c_proj','{"codec":"none","density":1.0,"elements":144,"predicted_ms":2.304e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.2.attn.c_proj","uncompressed_ms":2.304e-05}');
INSERT INTO "items" VALUES(14,4,'tensor/layers.2.mlp.c_fc','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.2.mlp.c_fc","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(15,4,'tensor/layers.2.mlp.c_proj','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.2.mlp.c_proj","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(16,4,'tensor/layers.3.attn.c_attn','{"codec":"none","density":1.0,"elements":432,"predicted_ms":6.912e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.3.attn.c_attn","uncompressed_ms":6.912e-05}');
INSERT INTO "items" VALUES(17,4,'tensor/layers.3.attn.c_proj','{"codec":"none","density":1.0,"elements":144,"predicted_ms":2.304e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.3.attn.c_proj","uncompressed_ms":2.304e-05}');
INSERT INTO "items" VALUES(18,4,'tensor/layers.3.mlp.c_fc','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.3.mlp.c_fc","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(19,4,'tensor/layers.3.mlp.c_proj','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.3.mlp.c_proj","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(20,4,'tensor/layers.4.attn.c_attn','{"codec":"none","density":1.0,"elements":432,"predicted_ms":6.912e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.4.attn.c_attn","uncompressed_ms":6.912e-05}');
INSERT INTO "items" VALUES(21,4,'tensor/layers.4.attn.c_proj','{"codec":"none","density":1.0,"elements":144,"predicted_ms":2.304e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.4.attn.c_proj","uncompressed_ms":2.304e-05}');
INSERT INTO "items" VALUES(22,4,'tensor/layers.4.mlp.c_fc','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.4.mlp.c_fc","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(23,4,'tensor/layers.4.mlp.c_proj','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.4.mlp.c_proj","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(24,4,'tensor/layers.5.attn.c_attn','{"codec":"none","density":1.0,"elements":432,"predicted_ms":6.912e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.5.attn.c_attn","uncompressed_ms":6.912e-05}');
INSERT INTO "items" VALUES(25,4,'tensor/layers.5.attn.c_proj','{"codec":"none","density":1.0,"elements":144,"predicted_ms":2.304e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.5.attn.c_proj","uncompressed_ms":2.304e-05}');
INSERT INTO "items" VALUES(26,4,'tensor/layers.5.mlp.c_fc','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.5.mlp.c_fc","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(27,4,'tensor/layers.5.mlp.c_proj','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.5.mlp.c_proj","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(28,4,'tensor/layers.6.attn.c_attn','{"codec":"none","density":1.0,"elements":432,"predicted_ms":6.912e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.6.attn.c_attn","uncompressed_ms":6.912e-05}');
INSERT INTO "items" VALUES(29,4,'tensor/layers.6.attn.c_proj','{"codec":"none","density":1.0,"elements":144,"predicted_ms":2.304e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.6.attn.c_proj","uncompressed_ms":2.304e-05}');
INSERT INTO "items" VALUES(30,4,'tensor/layers.6.mlp.c_fc','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.6.mlp.c_fc","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(31,4,'tensor/layers.6.mlp.c_proj','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.6.mlp.c_proj","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(32,4,'tensor/layers.7.attn.c_attn','{"codec":"none","density":1.0,"elements":432,"predicted_ms":6.912e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.7.attn.c_attn","uncompressed_ms":6.912e-05}');
INSERT INTO "items" VALUES(33,4,'tensor/layers.7.attn.c_proj','{"codec":"none","density":1.0,"elements":144,"predicted_ms":2.304e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.7.attn.c_proj","uncompressed_ms":2.304e-05}');
INSERT INTO "items" VALUES(34,4,'tensor/layers.7.mlp.c_fc','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.7.mlp.c_fc","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(35,4,'tensor/layers.7.mlp.c_proj','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.7.mlp.c_proj","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(36,4,'tensor/layers.8.attn.c_attn','{"codec":"none","density":1.0,"elements":432,"predicted_ms":6.912e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.8.attn.c_attn","uncompressed_ms":6.912e-05}');
INSERT INTO "items" VALUES(37,4,'tensor/layers.8.attn.c_proj','{"codec":"none","density":1.0,"elements":144,"predicted_ms":2.304e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.8.attn.c_proj","uncompressed_ms":2.304e-05}');
INSERT INTO "items" VALUES(38,4,'tensor/layers.8.mlp.c_fc','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.8.mlp.c_fc","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(39,4,'tensor/layers.8.mlp.c_proj','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.8.mlp.c_proj","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(40,4,'tensor/layers.9.attn.c_attn','{"codec":"none","density":1.0,"elements":432,"predicted_ms":6.912e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.9.attn.c_attn","uncompressed_ms":6.912e-05}');
INSERT INTO "items" VALUES(41,4,'tensor/layers.9.attn.c_proj','{"codec":"none","density":1.0,"elements":144,"predicted_ms":2.304e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.9.attn.c_proj","uncompressed_ms":2.304e-05}');
INSERT INTO "items" VALUES(42,4,'tensor/layers.9.mlp.c_fc','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.9.mlp.c_fc","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(43,4,'tensor/layers.9.mlp.c_proj','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.9.mlp.c_proj","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(44,4,'tensor/layers.10.attn.c_attn','{"codec":"none","density":1.0,"elements":432,"predicted_ms":6.912e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.10.attn.c_attn","uncompressed_ms":6.912e-05}');
INSERT INTO "items" VALUES(45,4,'tensor/layers.10.attn.c_proj','{"codec":"none","density":1.0,"elements":144,"predicted_ms":2.304e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.10.attn.c_proj","uncompressed_ms":2.304e-05}');
INSERT INTO "items" VALUES(46,4,'tensor/layers.10.mlp.c_fc','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.10.mlp.c_fc","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(47,4,'tensor/layers.10.mlp.c_proj','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.10.mlp.c_proj","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(48,4,'tensor/layers.11.attn.c_attn','{"codec":"none","density":1.0,"elements":432,"predicted_ms":6.912e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.11.attn.c_attn","uncompressed_ms":6.912e-05}');
INSERT INTO "items" VALUES(49,4,'tensor/layers.11.attn.c_proj','{"codec":"none","density":1.0,"elements":144,"predicted_ms":2.304e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.11.attn.c_proj","uncompressed_ms":2.304e-05}');
INSERT INTO "items" VALUES(50,4,'tensor/layers.11.mlp.c_fc','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.11.mlp.c_fc","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(51,4,'tensor/layers.11.mlp.c_proj','{"codec":"none","density":1.0,"elements":576,"predicted_ms":9.216e-05,"ratio":1.0,"rel_error":0.0,"tensor":"layers.11.mlp.c_proj","uncompressed_ms":9.216e-05}');
INSERT INTO "items" VALUES(52,5,'series/expert_load/0','{"x":0,"y":40}');
INSERT INTO "items" VALUES(53,5,'series/expert_load/1','{"x":1,"y":25}');
INSERT INTO "items" VALUES(54,5,'series/expert_load/2','{"x":2,"y":32}');
INSERT INTO "items" VALUES(55,5,'series/expert_load/3','{"x":3,"y":31}');
INSERT INTO "items" VALUES(56,5,'chart/expert_load','{"caption":"tokens routed per expert, first measured step, all ranks","kind":"columns","marks":[{"label":"balanced","y":32.0}],"x_label":"expert","y_label":"tokens"}');
INSERT INTO "items" VALUES(57,6,'corpus','{"bytes":100000,"eval_bytes":10000,"files":7,"source":"/usr/share/common-licenses + /usr/share/doc/*/copyright","train_bytes":90000}');
INSERT INTO "items" VALUES(58,6,'series/loss/0','{"aux_loss":0.024915502406656742,"x":0,"y":5.5527119636535645,"z_loss":0.008767494931817055}');
INSERT INTO "items" VALUES(59,6,'series/loss/1','{"aux_loss":0.021998926997184753,"x":1,"y":5.5499067306518555,"z_loss":0.007272095652297139}');
INSERT INTO "items" VALUES(60,6,'series/loss/2','{"aux_loss":0.02044360339641571,"x":2,"y":5.534845352172852,"z_loss":0.007625801954418421}');
INSERT INTO "items" VALUES(61,6,'series/loss/3','{"aux_loss":0.020579184405505657,"x":3,"y":5.463728427886963,"z_loss":0.007035193266347051}');
INSERT INTO "items" VALUES(62,6,'series/loss/4','{"aux_loss":0.02166138030588627,"x":4,"y":5.425080299377441,"z_loss":0.006944474298506975}');
INSERT INTO "items" VALUES(63,6,'series/expert_load/0','{"x":0,"y":24}');
INSERT INTO "items" VALUES(64,6,'series/expert_load/1','{"x":1,"y":40}');
INSERT INTO "items" VALUES(65,6,'series/expert_load/2','{"x":2,"y":45}');
INSERT INTO "items" VALUES(66,6,'series/expert_load/3','{"x":3,"y":19}');
INSERT INTO "items" VALUES(67,6,'chart/expert_load','{"caption":"tokens routed per expert, last step, all layers","kind":"columns","marks":[{"label":"balanced","y":32.0}],"x_label":"expert","y_label":"tokens"}');
INSERT INTO "items" VALUES(68,6,'chart/loss','{"caption":"training loss (nats/byte)","marks":[{"label":"eval loss (held-out tenth)","y":5.382226049900055}],"x_label":"step","y_label":"loss (nats/byte)"}');
INSERT INTO "items" VALUES(69,6,'series/loss/0','{"aux_loss":0.024915502406656742,"x":0,"y":5.5527119636535645,"z_loss":0.008767494931817055}');
INSERT INTO "items" VALUES(70,6,'series/loss/1','{"aux_loss":0.021998926997184753,"x":1,"y":5.5499067306518555,"z_loss":0.007272095652297139}');
INSERT INTO "items" VALUES(71,6,'series/loss/2','{"aux_loss":0.02044360339641571,"x":2,"y":5.534845352172852,"z_loss":0.007625801954418421}');
INSERT INTO "items" VALUES(72,6,'series/loss/3','{"aux_loss":0.020579184405505657,"x":3,"y":5.463728427886963,"z_loss":0.007035193266347051}');
INSERT INTO "items" VALUES(73,6,'series/loss/4','{"aux_loss":0.02166138030588627,"x":4,"y":5.425080299377441,"z_loss":0.006944474298506975}');
INSERT INTO "items" VALUES(74,6,'series/expert_load/0','{"x":0,"y":24}');
INSERT INTO "items" VALUES(75,6,'series/expert_load/1','{"x":1,"y":40}');
INSERT INTO "items" VALUES(76,6,'series/expert_load/2','{"x":2,"y":45}');
INSERT INTO "items" VALUES(77,6,'series/expert_load/3','{"x":3,"y":19}');
INSERT INTO "items" VALUES(78,6,'chart/expert_load','{"caption":"tokens routed per expert, last step, all layers","kind":"columns","marks":[{"label":"balanced","y":32.0}],"x_label":"expert","y_label":"tokens"}');
INSERT INTO "items" VALUES(79,6,'chart/loss','{"caption":"training loss (nats/byte)","marks":[{"label":"eval loss (held-out tenth)","y":5.382226049900055}],"x_label":"step","y_label":"loss (nats/byte)"}');
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  uuid TEXT NOT NULL UNIQUE,
  suite TEXT NOT NULL DEFAULT '',
  started_at REAL NOT NULL DEFAULT 0,
  finished_at REAL NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
  argv TEXT NOT NULL DEFAULT '',
  seed INTEGER NOT NULL DEFAULT 0,
  tags TEXT NOT NULL DEFAULT '[]',
  git_sha TEXT NOT NULL DEFAULT '',
  git_dirty INTEGER NOT NULL DEFAULT 0,
  env_json TEXT NOT NULL DEFAULT '{}'
, machine_key TEXT NOT NULL DEFAULT '', branch TEXT NOT NULL DEFAULT '', ci_json TEXT NOT NULL DEFAULT '{}', pid INTEGER NOT NULL DEFAULT 0, host TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '');
INSERT INTO "runs" VALUES(1,'d2691645-9714-4767-869d-ae8fe0ea187e','legacy-names',1.79635737859911966325e+09,1.79635738090238261223e+09,'ok','/tmp/ci-check/build/mlsysbench run /work/main/tests/data/legacy/suite.json --db /tmp/legacy.db --tag legacy',1,'["legacy"]','c3733b0bd52b4603a300634bdfc103be8b5e1498',0,'{"arch":"x86_64","assertions":false,"build_type":"RelWithDebInfo","compiler":"GNU 12.2.0","compiler_flags":" -O2 -g -DNDEBUG","cores":2,"cpu_affinity":2,"cpu_mhz":2096.017,"cpu_model":"AMD EPYC","env_vars":{"OPENBLAS_CORETYPE":"Haswell"},"gpu_note":"no CUDA driver (libcuda.so.1 not found)","gpus":[],"host":"vm","kernel":"Linux 6.18.44-fc-v1252","libraries":{"cuda_runtime":"13.0","curl":"7.88.1","mpi":"Open MPI v4.1.4","nccl":"2.28.9","nlohmann_json":"3.11.2","sqlite":"3.40.1"},"load_average":[3.74658203125,5.10205078125,3.20166015625],"memory_bytes":25276166144,"mlsysbench_version":"0.1.0","os":"Debian GNU/Linux 12 (bookworm)"}','653261eb03cc5a34','main','{}',19813,'vm','');
CREATE TABLE samples (
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  metric TEXT NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (case_id, metric, idx)
) WITHOUT ROWID;
INSERT INTO "samples" VALUES(1,0,'bits_per_element',16.001953125);
INSERT INTO "samples" VALUES(1,1,'bits_per_element',16.001953125);
INSERT INTO "samples" VALUES(1,0,'break_even_gbps',0.0);
INSERT INTO "samples" VALUES(1,1,'break_even_gbps',0.0);
INSERT INTO "samples" VALUES(1,0,'compress_gbps',2.56050009767532742448e+01);
INSERT INTO "samples" VALUES(1,1,'compress_gbps',4.43560067681895091578e+01);
INSERT INTO "samples" VALUES(1,0,'decompress_gbps',8.24300358468021);
INSERT INTO "samples" VALUES(1,1,'decompress_gbps',6.41252446183953139779e+01);
INSERT INTO "samples" VALUES(1,0,'ideal_ratio',1.51726871942703511741e+00);
INSERT INTO "samples" VALUES(1,1,'ideal_ratio',1.51726871942703511741e+00);
INSERT INTO "samples" VALUES(1,0,'ratio',9.99877944586842426488e-01);
INSERT INTO "samples" VALUES(1,1,'ratio',9.99877944586842426488e-01);
INSERT INTO "samples" VALUES(1,0,'ratio_vs_ideal',6.58998588571987120587e-01);
INSERT INTO "samples" VALUES(1,1,'ratio_vs_ideal',6.58998588571987120587e-01);
INSERT INTO "samples" VALUES(1,0,'time_ms',2.10199999999999970201e-02);
INSERT INTO "samples" VALUES(1,1,'time_ms',0.004999);
INSERT INTO "samples" VALUES(2,0,'bits_per_element',12.48193359375);
INSERT INTO "samples" VALUES(2,1,'bits_per_element',12.48193359375);
INSERT INTO "samples" VALUES(2,0,'break_even_gbps',1.44065856392035090971e-02);
INSERT INTO "samples" VALUES(2,1,'break_even_gbps',9.24485390115512561948e-02);
INSERT INTO "samples" VALUES(2,0,'compress_gbps',0.09582589445641);
INSERT INTO "samples" VALUES(2,1,'compress_gbps',0.699965287976289);
INSERT INTO "samples" VALUES(2,0,'decompress_gbps',2.07176050327189970046e-01);
INSERT INTO "samples" VALUES(2,1,'decompress_gbps',1.05290554761177967968e+00);
INSERT INTO "samples" VALUES(2,0,'ideal_ratio',1.51726871942703511741e+00);
INSERT INTO "samples" VALUES(2,1,'ideal_ratio',1.51726871942703511741e+00);
INSERT INTO "samples" VALUES(2,0,'ratio',1.2818526776982357429e+00);
INSERT INTO "samples" VALUES(2,1,'ratio',1.2818526776982357429e+00);
INSERT INTO "samples" VALUES(2,0,'ratio_vs_ideal',8.44842222926931896154e-01);
INSERT INTO "samples" VALUES(2,1,'ratio_vs_ideal',8.44842222926931896154e-01);
INSERT INTO "samples" VALUES(2,0,'time_ms',2.000474);
INSERT INTO "samples" VALUES(2,1,'time_ms',0.311741);
INSERT INTO "samples" VALUES(3,0,'algbw_gbps',3.72363636363636345554e+01);
INSERT INTO "samples" VALUES(3,1,'algbw_gbps',4.81882352941176534972e+01);
INSERT INTO "samples" VALUES(3,0,'baseline_time_ms',0.001533);
INSERT INTO "samples" VALUES(3,1,'baseline_time_ms',0.000191);
INSERT INTO "samples" VALUES(3,0,'busbw_gbps',0.0);
INSERT INTO "samples" VALUES(3,1,'busbw_gbps',0.0);
INSERT INTO "samples" VALUES(3,0,'compress_ms',0.0);
INSERT INTO "samples" VALUES(3,1,'compress_ms',0.0);
INSERT INTO "samples" VALUES(3,0,'decompress_ms',0.0);
INSERT INTO "samples" VALUES(3,1,'decompress_ms',0.0);
INSERT INTO "samples" VALUES(3,0,'speedup',6.96818181818181781039e+00);
INSERT INTO "samples" VALUES(3,1,'speedup',1.12352941176470588757e+00);
INSERT INTO "samples" VALUES(3,0,'time_ms',0.00022);
INSERT INTO "samples" VALUES(3,1,'time_ms',1.69999999999999985107e-04);
INSERT INTO "samples" VALUES(3,0,'wire_bytes',0.0);
INSERT INTO "samples" VALUES(3,1,'wire_bytes',0.0);
INSERT INTO "samples" VALUES(4,0,'baseline_model_time_ms',4.82496000000000053314e-03);
INSERT INTO "samples" VALUES(4,1,'baseline_model_time_ms',4.82496000000000053314e-03);
INSERT INTO "samples" VALUES(4,0,'predicted_ms',4.82495999999999879842e-03);
INSERT INTO "samples" VALUES(4,1,'predicted_ms',4.82495999999999879842e-03);
INSERT INTO "samples" VALUES(4,0,'ratio',1.0);
INSERT INTO "samples" VALUES(4,1,'ratio',1.0);
INSERT INTO "samples" VALUES(4,0,'rel_l2_error',0.0);
INSERT INTO "samples" VALUES(4,1,'rel_l2_error',0.0);
INSERT INTO "samples" VALUES(4,0,'speedup',1.0);
INSERT INTO "samples" VALUES(4,1,'speedup',1.0);
INSERT INTO "samples" VALUES(4,0,'time_ms',4.82496000000000053314e-03);
INSERT INTO "samples" VALUES(4,1,'time_ms',4.82496000000000053314e-03);
INSERT INTO "samples" VALUES(5,0,'aux_loss',1.01679731160402297973e-02);
INSERT INTO "samples" VALUES(5,1,'aux_loss',1.01798959076404571533e-02);
INSERT INTO "samples" VALUES(5,0,'backward_ms',0.052549);
INSERT INTO "samples" VALUES(5,1,'backward_ms',0.043202);
INSERT INTO "samples" VALUES(5,0,'dropped_fraction',0.0);
INSERT INTO "samples" VALUES(5,1,'dropped_fraction',0.0);
INSERT INTO "samples" VALUES(5,0,'expert_gemm_peak_ratio',8.75384392757798890372e-01);
INSERT INTO "samples" VALUES(5,1,'expert_gemm_peak_ratio',9.76438046798227876621e-01);
INSERT INTO "samples" VALUES(5,0,'expert_gemm_tflops',6.25111546817868762859e-02);
INSERT INTO "samples" VALUES(5,1,'expert_gemm_tflops',6.97273909445560863273e-02);
INSERT INTO "samples" VALUES(5,0,'forward_ms',9.73540000000000099733e-02);
INSERT INTO "samples" VALUES(5,1,'forward_ms',3.8572999999999996179e-02);
INSERT INTO "samples" VALUES(5,0,'fwd_bwd_ms',0.149903);
INSERT INTO "samples" VALUES(5,1,'fwd_bwd_ms',0.081775);
INSERT INTO "samples" VALUES(5,0,'load_imbalance',1.25);
INSERT INTO "samples" VALUES(5,1,'load_imbalance',1.28125);
INSERT INTO "samples" VALUES(5,0,'mfu',2.20400910932168431211e-01);
INSERT INTO "samples" VALUES(5,1,'mfu',4.04020272105959643571e-01);
INSERT INTO "samples" VALUES(5,0,'model_tflops',1.5738817768823840093e-02);
INSERT INTO "samples" VALUES(5,1,'model_tflops',2.88510669520024506939e-02);
INSERT INTO "samples" VALUES(5,0,'objective',4.54151025503904293145e-01);
INSERT INTO "samples" VALUES(5,1,'objective',-3.78712502866960676328e-01);
INSERT INTO "samples" VALUES(5,0,'optimizer_ms',0.042691);
INSERT INTO "samples" VALUES(5,1,'optimizer_ms',0.028333);
INSERT INTO "samples" VALUES(5,0,'peak_memory_mb',191.328256);
INSERT INTO "samples" VALUES(5,1,'peak_memory_mb',191.328256);
INSERT INTO "samples" VALUES(5,0,'peak_tflops',0.0714099488167165);
INSERT INTO "samples" VALUES(5,1,'peak_tflops',0.0714099488167165);
INSERT INTO "samples" VALUES(5,0,'step_ms',1.92594000000000015182e-01);
INSERT INTO "samples" VALUES(5,1,'step_ms',0.110108);
INSERT INTO "samples" VALUES(5,0,'tokens_per_s',3.32305263923071324814e+05);
INSERT INTO "samples" VALUES(5,1,'tokens_per_s',5.81247502452137880047e+05);
INSERT INTO "samples" VALUES(5,0,'z_loss',4.38676727935671806335e-03);
INSERT INTO "samples" VALUES(5,1,'z_loss',4.3738731183111667633e-03);
INSERT INTO "samples" VALUES(6,0,'aux_loss',2.16613803058862686157e-02);
INSERT INTO "samples" VALUES(6,1,'aux_loss',2.16613803058862686157e-02);
INSERT INTO "samples" VALUES(6,0,'backward_ms',6.95136000000000087162e-02);
INSERT INTO "samples" VALUES(6,1,'backward_ms',6.79487999999999897626e-02);
INSERT INTO "samples" VALUES(6,0,'dropped_fraction',0.0);
INSERT INTO "samples" VALUES(6,1,'dropped_fraction',0.0);
INSERT INTO "samples" VALUES(6,0,'eval_loss',5.38222604990005493164e+00);
INSERT INTO "samples" VALUES(6,1,'eval_loss',5.38222604990005493164e+00);
INSERT INTO "samples" VALUES(6,0,'expert_gemm_peak_ratio',4.81715662638583730359e-01);
INSERT INTO "samples" VALUES(6,1,'expert_gemm_peak_ratio',5.12463979616457177002e-01);
INSERT INTO "samples" VALUES(6,0,'expert_gemm_tflops',3.43992908132319391567e-02);
INSERT INTO "samples" VALUES(6,1,'expert_gemm_tflops',3.65950265548220590727e-02);
INSERT INTO "samples" VALUES(6,0,'final_loss',5.50525455474853497861e+00);
INSERT INTO "samples" VALUES(6,1,'final_loss',5.50525455474853497861e+00);
INSERT INTO "samples" VALUES(6,0,'forward_ms',0.0940608);
INSERT INTO "samples" VALUES(6,1,'forward_ms',9.0026799999999990165e-02);
INSERT INTO "samples" VALUES(6,0,'fwd_bwd_ms',0.1635744);
INSERT INTO "samples" VALUES(6,1,'fwd_bwd_ms',0.1579756);
INSERT INTO "samples" VALUES(6,0,'initial_loss',5.55271196365356445312e+00);
INSERT INTO "samples" VALUES(6,1,'initial_loss',5.55271196365356445312e+00);
INSERT INTO "samples" VALUES(6,0,'load_imbalance',1.40625);
INSERT INTO "samples" VALUES(6,1,'load_imbalance',1.40625);
INSERT INTO "samples" VALUES(6,0,'mfu',1.68316668905529848165e-01);
INSERT INTO "samples" VALUES(6,1,'mfu',1.74281965861947718554e-01);
INSERT INTO "samples" VALUES(6,0,'model_tflops',1.20194847115441035695e-02);
INSERT INTO "samples" VALUES(6,1,'model_tflops',1.24454662618784187705e-02);
INSERT INTO "samples" VALUES(6,0,'optimizer_ms',3.87178000000000036018e-02);
INSERT INTO "samples" VALUES(6,1,'optimizer_ms',0.0408094);
INSERT INTO "samples" VALUES(6,0,'peak_memory_mb',191.328256);
INSERT INTO "samples" VALUES(6,1,'peak_memory_mb',191.328256);
INSERT INTO "samples" VALUES(6,0,'peak_tflops',0.0714099488167165);
INSERT INTO "samples" VALUES(6,1,'peak_tflops',0.0714099488167165);
INSERT INTO "samples" VALUES(6,0,'step_ms',2.02292200000000033099e-01);
INSERT INTO "samples" VALUES(6,1,'step_ms',0.198785);
INSERT INTO "samples" VALUES(6,0,'tokens_per_s',1.58187018580053962062e+05);
INSERT INTO "samples" VALUES(6,1,'tokens_per_s',1.60977940991523500993e+05);
INSERT INTO "samples" VALUES(6,0,'z_loss',6.94447429850697517395e-03);
INSERT INTO "samples" VALUES(6,1,'z_loss',6.94447429850697517395e-03);
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO "schema_version" VALUES(3);
CREATE TABLE summaries (
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  metric TEXT NOT NULL,
  unit TEXT NOT NULL DEFAULT '',
  better TEXT NOT NULL CHECK (better IN ('lower', 'higher')),
  n INTEGER NOT NULL,
  min REAL, median REAL, mean REAL, stddev REAL, rel_stddev REAL,
  p05 REAL, p95 REAL, max REAL, ci_lo REAL, ci_hi REAL,
  PRIMARY KEY (case_id, metric)
);
INSERT INTO "summaries" VALUES(1,'bits_per_element','bits','lower',2,16.001953125,16.001953125,16.001953125,0.0,0.0,16.001953125,16.001953125,16.001953125,16.001953125,16.001953125);
INSERT INTO "summaries" VALUES(1,'break_even_gbps','GB/s','higher',2,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0);
INSERT INTO "summaries" VALUES(1,'compress_gbps','GB/s','higher',2,2.56050009767532742448e+01,3.49805038724713881484e+01,3.49805038724713881484e+01,1.32589633491927880724e+01,3.7903866100760191804e-01,2.65425512663250842129e+01,43.4184564786177,4.43560067681895091578e+01,2.56050009767532742448e+01,4.43560067681895091578e+01);
INSERT INTO "summaries" VALUES(1,'decompress_gbps','GB/s','higher',2,8.24300358468021,3.61841241015377619301e+01,3.61841241015377619301e+01,3.95147115828410946383e+01,1.09204554660373243102e+00,1.10371156363659643777e+01,6.13311325667095559328e+01,6.41252446183953139779e+01,8.24300358468021,6.41252446183953139779e+01);
INSERT INTO "summaries" VALUES(1,'ideal_ratio','ratio','higher',2,1.51726871942703511741e+00,1.51726871942703511741e+00,1.51726871942703511741e+00,0.0,0.0,1.51726871942703511741e+00,1.51726871942703511741e+00,1.51726871942703511741e+00,1.51726871942703511741e+00,1.51726871942703511741e+00);
INSERT INTO "summaries" VALUES(1,'ratio','ratio','higher',2,9.99877944586842426488e-01,9.99877944586842426488e-01,9.99877944586842426488e-01,0.0,0.0,9.99877944586842426488e-01,9.99877944586842426488e-01,9.99877944586842426488e-01,9.99877944586842426488e-01,9.99877944586842426488e-01);
INSERT INTO "summaries" VALUES(1,'ratio_vs_ideal','ratio','higher',2,6.58998588571987120587e-01,6.58998588571987120587e-01,6.58998588571987120587e-01,0.0,0.0,6.58998588571987120587e-01,6.58998588571987120587e-01,6.58998588571987120587e-01,6.58998588571987120587e-01,6.58998588571987120587e-01);
INSERT INTO "summaries" VALUES(1,'time_ms','ms','lower',2,0.004999,1.30094999999999984957e-02,1.30094999999999984957e-02,1.13285577413896765969e-02,8.70791171174117195619e-01,0.00580005,2.02189499999999959534e-02,2.10199999999999970201e-02,0.004999,2.10199999999999970201e-02);
INSERT INTO "summaries" VALUES(2,'bits_per_element','bits','lower',2,12.48193359375,12.48193359375,12.48193359375,0.0,0.0,12.48193359375,12.48193359375,12.48193359375,12.48193359375,12.48193359375);
INSERT INTO "summaries" VALUES(2,'break_even_gbps','GB/s','higher',2,1.44065856392035090971e-02,5.34275623253773826459e-02,5.34275623253773826459e-02,5.51839944466314402671e-02,1.03287501890049315811e+00,1.8308683307820896452e-02,8.85464413429338653704e-02,9.24485390115512561948e-02,1.44065856392035090971e-02,9.24485390115512561948e-02);
INSERT INTO "summaries" VALUES(2,'compress_gbps','GB/s','higher',2,0.09582589445641,3.97895591216349486796e-01,3.97895591216349486796e-01,4.27191061939834582084e-01,1.07362602494269943065e+00,1.26032864132403943369e-01,0.669758318300295,0.699965287976289,0.09582589445641,0.699965287976289);
INSERT INTO "summaries" VALUES(2,'decompress_gbps','GB/s','higher',2,2.07176050327189970046e-01,6.30040798969484838742e-01,6.30040798969484838742e-01,5.98021062579423223759e-01,9.49178312829210168999e-01,2.4946252519141945414e-01,1.01061907274755014007e+00,1.05290554761177967968e+00,2.07176050327189970046e-01,1.05290554761177967968e+00);
INSERT INTO "summaries" VALUES(2,'ideal_ratio','ratio','higher',2,1.51726871942703511741e+00,1.51726871942703511741e+00,1.51726871942703511741e+00,0.0,0.0,1.51726871942703511741e+00,1.51726871942703511741e+00,1.51726871942703511741e+00,1.51726871942703511741e+00,1.51726871942703511741e+00);
INSERT INTO "summaries" VALUES(2,'ratio','ratio','higher',2,1.2818526776982357429e+00,1.2818526776982357429e+00,1.2818526776982357429e+00,0.0,0.0,1.2818526776982357429e+00,1.2818526776982357429e+00,1.2818526776982357429e+00,1.2818526776982357429e+00,1.2818526776982357429e+00);
INSERT INTO "summaries" VALUES(2,'ratio_vs_ideal','ratio','higher',2,8.44842222926931896154e-01,8.44842222926931896154e-01,8.44842222926931896154e-01,0.0,0.0,8.44842222926931896154e-01,8.44842222926931896154e-01,8.44842222926931896154e-01,8.44842222926931896154e-01,8.44842222926931896154e-01);
INSERT INTO "summaries" VALUES(2,'time_ms','ms','lower',2,0.311741,1.1561075,1.1561075,1.19411455591350201821e+00,1.03287501890049315811e+00,0.39617765,1.91603735,2.000474,0.311741,2.000474);
INSERT INTO "summaries" VALUES(3,'algbw_gbps','GB/s','higher',2,3.72363636363636345554e+01,4.2712299465240647577e+01,4.2712299465240647577e+01,7.74414271588262259626e+00,1.81309431073473831252e-01,3.77839572192513344366e+01,4.7640641711229953616e+01,4.81882352941176534972e+01,3.72363636363636345554e+01,4.81882352941176534972e+01);
INSERT INTO "summaries" VALUES(3,'baseline_time_ms','ms','lower',2,0.000191,0.000862,0.000862,9.48937300352346900858e-04,1.10085533683566927365e+00,2.5810000000000003946e-04,0.0014659,0.001533,0.000191,0.001533);
INSERT INTO "summaries" VALUES(3,'busbw_gbps','GB/s','higher',2,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0);
INSERT INTO "summaries" VALUES(3,'compress_ms','ms','lower',2,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0);
INSERT INTO "summaries" VALUES(3,'decompress_ms','ms','lower',2,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0);
INSERT INTO "summaries" VALUES(3,'speedup','ratio','higher',2,1.12352941176470588757e+00,4.04585561497326118285e+00,4.04585561497326207103e+00,4.13279335025581318063e+00,1.02148809635242643345e+00,1.41576203208556150592e+00,6.67594919786096241409e+00,6.96818181818181781039e+00,1.12352941176470588757e+00,6.96818181818181781039e+00);
INSERT INTO "summaries" VALUES(3,'time_ms','ms','lower',2,1.69999999999999985107e-04,0.000195,0.000195,3.53553390593273905522e-05,1.81309431073473803497e-01,0.0001725,0.0002175,0.00022,1.69999999999999985107e-04,0.00022);
INSERT INTO "summaries" VALUES(3,'wire_bytes','bytes','lower',2,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0);
INSERT INTO "summaries" VALUES(4,'baseline_model_time_ms','ms','lower',2,4.82496000000000053314e-03,4.82496000000000053314e-03,4.82496000000000053314e-03,0.0,0.0,4.82496000000000053314e-03,4.82496000000000053314e-03,4.82496000000000053314e-03,4.82496000000000053314e-03,4.82496000000000053314e-03);
INSERT INTO "summaries" VALUES(4,'predicted_ms','ms','lower',2,4.82495999999999879842e-03,4.82495999999999879842e-03,4.82495999999999879842e-03,0.0,0.0,4.82495999999999879842e-03,4.82495999999999879842e-03,4.82495999999999879842e-03,4.82495999999999879842e-03,4.82495999999999879842e-03);
INSERT INTO "summaries" VALUES(4,'ratio','ratio','higher',2,1.0,1.0,1.0,0.0,0.0,1.0,1.0,1.0,1.0,1.0);
INSERT INTO "summaries" VALUES(4,'rel_l2_error','ratio','lower',2,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0);
INSERT INTO "summaries" VALUES(4,'speedup','ratio','higher',2,1.0,1.0,1.0,0.0,0.0,1.0,1.0,1.0,1.0,1.0);
INSERT INTO "summaries" VALUES(4,'time_ms','ms','lower',2,4.82496000000000053314e-03,4.82496000000000053314e-03,4.82496000000000053314e-03,0.0,0.0,4.82496000000000053314e-03,4.82496000000000053314e-03,4.82496000000000053314e-03,4.82496000000000053314e-03,4.82496000000000053314e-03);
INSERT INTO "summaries" VALUES(5,'aux_loss','loss','lower',2,1.01679731160402297973e-02,1.01739345118403434753e-02,1.01739345118403434753e-02,8.43068679119477232958e-06,8.28655500129591576774e-04,1.01685692556202408182e-02,1.01792997680604461324e-02,1.01798959076404571533e-02,1.01679731160402297973e-02,1.01798959076404571533e-02);
INSERT INTO "summaries" VALUES(5,'backward_ms','ms','lower',2,0.043202,0.0478755,0.0478755,0.00660932708375066,1.38052387625208300425e-01,4.36693499999999956706e-02,0.05208165,0.052549,0.043202,0.052549);
INSERT INTO "summaries" VALUES(5,'dropped_fraction','ratio','lower',2,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0);
INSERT INTO "summaries" VALUES(5,'expert_gemm_peak_ratio','ratio','higher',2,8.75384392757798890372e-01,9.25911219778013383496e-01,9.25911219778013383496e-01,7.14557240356666900638e-02,7.71734076759520853938e-02,8.80437075459820306377e-01,9.71385364096206460615e-01,9.76438046798227876621e-01,8.75384392757798890372e-01,9.76438046798227876621e-01);
INSERT INTO "summaries" VALUES(5,'expert_gemm_tflops','TFLOP/s','higher',2,6.25111546817868762859e-02,6.61192728131714813066e-02,6.61192728131714813066e-02,5.10264959604837722156e-03,7.7173407675952071516e-02,6.28719664949253381758e-02,6.93665791314176244375e-02,6.97273909445560863273e-02,6.25111546817868762859e-02,6.97273909445560863273e-02);
INSERT INTO "summaries" VALUES(5,'forward_ms','ms','lower',2,3.8572999999999996179e-02,6.7963500000000010015e-02,6.7963500000000010015e-02,4.15644437049264570127e-02,6.11570088428736724495e-01,4.15120499999999947871e-02,0.09441495,9.73540000000000099733e-02,3.8572999999999996179e-02,9.73540000000000099733e-02);
INSERT INTO "summaries" VALUES(5,'fwd_bwd_ms','ms','lower',2,0.081775,0.115839,0.115839,4.81737707886771143739e-02,4.15868324041791748157e-01,0.0851814,0.1464966,0.149903,0.081775,0.149903);
INSERT INTO "summaries" VALUES(5,'load_imbalance','ratio','lower',2,1.25,1.265625,1.265625,2.2097086912079611648e-02,1.74594266959641371272e-02,1.2515625,1.2796875,1.28125,1.25,1.28125);
INSERT INTO "summaries" VALUES(5,'mfu','ratio','higher',2,2.20400910932168431211e-01,3.12210591519064051269e-01,3.12210591519064051269e-01,1.29838495443129642303e-01,4.1586832404179185918e-01,0.229581878990858,3.9483930404727007879e-01,4.04020272105959643571e-01,2.20400910932168431211e-01,4.04020272105959643571e-01);
INSERT INTO "summaries" VALUES(5,'model_tflops','TFLOP/s','higher',2,1.5738817768823840093e-02,2.22949423604131453935e-02,2.22949423604131453935e-02,9.27176031403336396718e-03,4.15868324041791803669e-01,1.63944302279827695822e-02,2.81954544928435177353e-02,2.88510669520024506939e-02,1.5738817768823840093e-02,2.88510669520024506939e-02);
INSERT INTO "summaries" VALUES(5,'objective','loss','lower',2,-3.78712502866960676328e-01,3.77192613184718084085e-02,3.77192613184718084085e-02,5.8892344871399315842e-01,1.56133346234324754675e+01,-3.37069326448417416752e-01,0.412507849085361,4.54151025503904293145e-01,-3.78712502866960676328e-01,4.54151025503904293145e-01);
INSERT INTO "summaries" VALUES(5,'optimizer_ms','ms','lower',2,0.028333,0.035512,0.035512,1.01526391642764481082e-02,2.85893195659958521126e-01,0.0290509,0.0419731,0.042691,0.028333,0.042691);
INSERT INTO "summaries" VALUES(5,'peak_memory_mb','MB','lower',2,191.328256,191.328256,191.328256,0.0,0.0,191.328256,191.328256,191.328256,191.328256,191.328256);
INSERT INTO "summaries" VALUES(5,'peak_tflops','TFLOP/s','higher',2,0.0714099488167165,0.0714099488167165,0.0714099488167165,0.0,0.0,0.0714099488167165,0.0714099488167165,0.0714099488167165,0.0714099488167165,0.0714099488167165);
INSERT INTO "summaries" VALUES(5,'step_ms','ms','lower',2,0.110108,0.151351,0.151351,5.83264099529535659516e-02,0.385371817516591,0.1142323,1.88469700000000017769e-01,1.92594000000000015182e-01,0.110108,1.92594000000000015182e-01);
INSERT INTO "summaries" VALUES(5,'tokens_per_s','tokens/s','higher',2,3.32305263923071324814e+05,4.56776383187604602441e+05,4.56776383187604602441e+05,1.76028744987661979392e+05,3.85371817516590942087e-01,3.44752375849524629299e+05,5.6880039052568457554e+05,5.81247502452137880047e+05,3.32305263923071324814e+05,5.81247502452137880047e+05);
INSERT INTO "summaries" VALUES(5,'z_loss','loss','lower',2,4.3738731183111667633e-03,4.38032019883394241333e-03,4.38032019883394241333e-03,9.11754871302074759199e-06,2.08147996017457202408e-03,4.3745178263634443283e-03,4.38612257130444049835e-03,4.38676727935671806335e-03,4.3738731183111667633e-03,4.38676727935671806335e-03);
INSERT INTO "summaries" VALUES(6,'aux_loss','loss','lower',2,2.16613803058862686157e-02,2.16613803058862686157e-02,2.16613803058862686157e-02,0.0,0.0,2.16613803058862686157e-02,2.16613803058862686157e-02,2.16613803058862686157e-02,2.16613803058862686157e-02,2.16613803058862686157e-02);
INSERT INTO "summaries" VALUES(6,'backward_ms','ms','lower',2,6.79487999999999897626e-02,6.87311999999999923005e-02,6.87311999999999923005e-02,1.10648069120072292323e-03,1.60986668529099312408e-02,0.06802704,0.06943536,6.95136000000000087162e-02,6.79487999999999897626e-02,6.95136000000000087162e-02);
INSERT INTO "summaries" VALUES(6,'dropped_fraction','ratio','lower',2,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0);
INSERT INTO "summaries" VALUES(6,'eval_loss','nats/byte','lower',2,5.38222604990005493164e+00,5.38222604990005493164e+00,5.38222604990005493164e+00,0.0,0.0,5.38222604990005493164e+00,5.38222604990005493164e+00,5.38222604990005493164e+00,5.38222604990005493164e+00,5.38222604990005493164e+00);
INSERT INTO "summaries" VALUES(6,'expert_gemm_peak_ratio','ratio','higher',2,4.81715662638583730359e-01,4.97089821127520425925e-01,4.97089821127520425925e-01,2.1742343445127765289e-02,0.0437392650604087,4.83253078487477394364e-01,5.10926563767563512996e-01,5.12463979616457177002e-01,4.81715662638583730359e-01,5.12463979616457177002e-01);
INSERT INTO "summaries" VALUES(6,'expert_gemm_tflops','TFLOP/s','higher',2,3.43992908132319391567e-02,0.035497158684027,0.035497158684027,1.55261963257204648435e-03,4.37392650604087260268e-02,3.45090776003114454995e-02,3.648523976774255273e-02,3.65950265548220590727e-02,3.43992908132319391567e-02,3.65950265548220590727e-02);
INSERT INTO "summaries" VALUES(6,'final_loss','nats/byte','lower',2,5.50525455474853497861e+00,5.50525455474853497861e+00,5.50525455474853497861e+00,0.0,0.0,5.50525455474853497861e+00,5.50525455474853497861e+00,5.50525455474853497861e+00,5.50525455474853497861e+00,5.50525455474853497861e+00);
INSERT INTO "summaries" VALUES(6,'forward_ms','ms','lower',2,9.0026799999999990165e-02,0.0920438,0.0920438,0.00285246875530654,3.09903410692142222693e-02,9.02284999999999892672e-02,0.0938591,0.0940608,9.0026799999999990165e-02,0.0940608);
INSERT INTO "summaries" VALUES(6,'fwd_bwd_ms','ms','lower',2,0.1579756,0.160775,0.160775,3.95894944650725284784e-03,2.46241607619794924954e-02,0.15825554,0.16329446,0.1635744,0.1579756,0.1635744);
INSERT INTO "summaries" VALUES(6,'initial_loss','nats/byte','lower',2,5.55271196365356445312e+00,5.55271196365356445312e+00,5.55271196365356445312e+00,0.0,0.0,5.55271196365356445312e+00,5.55271196365356445312e+00,5.55271196365356445312e+00,5.55271196365356445312e+00,5.55271196365356445312e+00);
INSERT INTO "summaries" VALUES(6,'load_imbalance','ratio','lower',2,1.40625,1.40625,1.40625,0.0,0.0,1.40625,1.40625,1.40625,1.40625,1.40625);
INSERT INTO "summaries" VALUES(6,'mfu','ratio','higher',2,1.68316668905529848165e-01,1.71299317383738769482e-01,1.71299317383738769482e-01,4.21810192967454929136e-03,2.46241607619795931094e-02,1.68614933753350737521e-01,1.73983701014126829198e-01,1.74281965861947718554e-01,1.68316668905529848165e-01,1.74281965861947718554e-01);
INSERT INTO "summaries" VALUES(6,'model_tflops','TFLOP/s','higher',2,1.20194847115441035695e-02,1.223247548671126117e-02,1.223247548671126117e-02,3.01214442901752931219e-04,2.46241607619796139261e-02,1.2040783789060819503e-02,1.2424167184361702837e-02,1.24454662618784187705e-02,1.20194847115441035695e-02,1.24454662618784187705e-02);
INSERT INTO "summaries" VALUES(6,'optimizer_ms','ms','lower',2,3.87178000000000036018e-02,0.0397636,0.0397636,1.47898454352978219079e-03,3.71944326854153559103e-02,3.88223800000000035526e-02,0.04070482,0.0408094,3.87178000000000036018e-02,0.0408094);
INSERT INTO "summaries" VALUES(6,'peak_memory_mb','MB','lower',2,191.328256,191.328256,191.328256,0.0,0.0,191.328256,191.328256,191.328256,191.328256,191.328256);
INSERT INTO "summaries" VALUES(6,'peak_tflops','TFLOP/s','higher',2,0.0714099488167165,0.0714099488167165,0.0714099488167165,0.0,0.0,0.0714099488167165,0.0714099488167165,0.0714099488167165,0.0714099488167165,0.0714099488167165);
INSERT INTO "summaries" VALUES(6,'step_ms','ms','lower',2,0.198785,0.2005386,0.2005386,2.47996490297749038952e-03,1.23665214725618421987e-02,0.19896036,2.02116840000000019816e-01,2.02292200000000033099e-01,0.198785,2.02292200000000033099e-01);
INSERT INTO "summaries" VALUES(6,'tokens_per_s','tokens/s','higher',2,1.58187018580053962062e+05,1.59582479785788746082e+05,1.59582479785788746082e+05,1.97348016291562294091e+03,1.23665214725618439334e-02,1.58326564700627437556e+05,1.60838394870950025499e+05,1.60977940991523500993e+05,1.58187018580053962062e+05,1.60977940991523500993e+05);
INSERT INTO "summaries" VALUES(6,'z_loss','loss','lower',2,6.94447429850697517395e-03,6.94447429850697517395e-03,6.94447429850697517395e-03,0.0,0.0,6.94447429850697517395e-03,6.94447429850697517395e-03,6.94447429850697517395e-03,6.94447429850697517395e-03,6.94447429850697517395e-03);
CREATE INDEX cases_by_run ON cases(run_id, workload, params_key);
CREATE INDEX items_by_case ON items(case_id, key);
CREATE INDEX runs_by_machine ON runs(machine_key, branch, suite);
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('runs',1);
INSERT INTO "sqlite_sequence" VALUES('cases',6);
COMMIT;
