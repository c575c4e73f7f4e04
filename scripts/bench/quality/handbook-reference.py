# The Fraud Detection Handbook's own pipeline, run as the reference the TypeScript port is
# checked against (docs/risk-model.md, "The benchmark"). It executes the function definitions
# of the Handbook's notebooks verbatim (SimulatedDataset, BaselineFeatureTransformation) and
# of Chapter_References/shared_functions.py, then dumps the raw transactions, the split's
# features and a scikit-learn logistic regression's test predictions and metrics.
#
#   git --git-dir=<fetched handbook repo> show HEAD:<path> > <dir>/<file>   (the three files)
#   python3 handbook-reference.py <dir> 5000 10000 5 <out>    # ~15 minutes with pandas
#
# Checked with Python 3.11, numpy 1.24.2, pandas 1.5.3, scikit-learn 1.2.1 (Debian's packages).
import json, sys, os, time, datetime, random
import numpy as np, pandas as pd
import sklearn
from sklearn import metrics, linear_model, preprocessing
def cells(f):
    nb=json.load(open(f))
    import ast
    res=[]
    for c in nb['cells']:
        src=''.join(c['source'])
        if c['cell_type']!='code' or not src.lstrip().startswith('def '): continue
        tree=ast.parse(src)
        res.append(ast.unparse(ast.Module(body=[n for n in tree.body if isinstance(n, ast.FunctionDef)], type_ignores=[])))
    return res
g=globals()
base=sys.argv[1]
for s in cells(os.path.join(base,'SimulatedDataset.ipynb')): exec(s, g)
for s in cells(os.path.join(base,'BaselineFeatureTransformation.ipynb')): exec(s, g)
src=open(os.path.join(base,'shared_functions.py')).read()
import re
for name in ['get_train_test_set','scaleData','card_precision_top_k_day','card_precision_top_k','performance_assessment']:
    m=re.search(r'^def '+name+r'\(.*?(?=^# |^def |\Z)', src, re.S|re.M)
    exec(m.group(0), g)
nc, nt, r = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
out=sys.argv[5]
t=time.time()
(cp, tp, df)=generate_dataset(n_customers=nc, n_terminals=nt, nb_days=183, start_date="2018-04-01", r=r)
df=add_frauds(cp, tp, df)
print("generated", len(df), df.TX_FRAUD.sum(), time.time()-t, flush=True)
df[['TRANSACTION_ID','TX_TIME_SECONDS','CUSTOMER_ID','TERMINAL_ID','TX_AMOUNT','TX_FRAUD','TX_FRAUD_SCENARIO']].to_csv(out+'/raw.csv', index=False)
df['TX_DURING_WEEKEND']=df.TX_DATETIME.apply(is_weekend)
df['TX_DURING_NIGHT']=df.TX_DATETIME.apply(is_night)
df=df.groupby('CUSTOMER_ID').apply(lambda x: get_customer_spending_behaviour_features(x, windows_size_in_days=[1,7,30]))
df=df.sort_values('TX_DATETIME').reset_index(drop=True)
df=df.groupby('TERMINAL_ID').apply(lambda x: get_count_risk_rolling_window(x, delay_period=7, windows_size_in_days=[1,7,30], feature="TERMINAL_ID"))
df=df.sort_values('TX_DATETIME').reset_index(drop=True)
print("features", time.time()-t, flush=True)
# what the modeling notebook loads: the per-day files 2018-07-25..2018-08-14, sorted by id
sel=df[(df.TX_DATETIME>='2018-07-25')&(df.TX_DATETIME<'2018-08-15')].sort_values('TRANSACTION_ID').reset_index(drop=True)
start=datetime.datetime.strptime("2018-07-25", "%Y-%m-%d")
(train_df, test_df)=get_train_test_set(sel,start,delta_train=7,delta_delay=7,delta_test=7)
print("split", train_df.shape[0], train_df.TX_FRAUD.sum(), test_df.shape[0], test_df.TX_FRAUD.sum(), flush=True)
input_features=['TX_AMOUNT','TX_DURING_WEEKEND', 'TX_DURING_NIGHT', 'CUSTOMER_ID_NB_TX_1DAY_WINDOW',
       'CUSTOMER_ID_AVG_AMOUNT_1DAY_WINDOW', 'CUSTOMER_ID_NB_TX_7DAY_WINDOW',
       'CUSTOMER_ID_AVG_AMOUNT_7DAY_WINDOW', 'CUSTOMER_ID_NB_TX_30DAY_WINDOW',
       'CUSTOMER_ID_AVG_AMOUNT_30DAY_WINDOW', 'TERMINAL_ID_NB_TX_1DAY_WINDOW',
       'TERMINAL_ID_RISK_1DAY_WINDOW', 'TERMINAL_ID_NB_TX_7DAY_WINDOW',
       'TERMINAL_ID_RISK_7DAY_WINDOW', 'TERMINAL_ID_NB_TX_30DAY_WINDOW',
       'TERMINAL_ID_RISK_30DAY_WINDOW']
pd.concat([train_df.assign(SET='train'), test_df.assign(SET='test')])[['SET','TRANSACTION_ID','TX_TIME_DAYS','CUSTOMER_ID','TX_FRAUD']+input_features].to_csv(out+'/split_features.csv', index=False)
train_df=train_df.copy(); test_df=test_df.copy()
(train_df,test_df)=scaleData(train_df,test_df,input_features)
clf=linear_model.LogisticRegression(random_state=0).fit(train_df[input_features], train_df['TX_FRAUD'])
test_df['predictions']=clf.predict_proba(test_df[input_features])[:,1]
print("coef", list(clf.intercept_), list(clf.coef_[0]), "iters", clf.n_iter_, flush=True)
print(performance_assessment(test_df, top_k_list=[100], rounded=False), flush=True)
test_df[['TRANSACTION_ID','predictions']].to_csv(out+'/lr_predictions.csv', index=False)
print("done", time.time()-t, flush=True)
